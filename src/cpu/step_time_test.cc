#include "cpu/step_time.h"

#include <gtest/gtest.h>

#include "cpu/cpu_runner.h"
#include "cpu/weights.h"
#include "model/catalog.h"

namespace goodput::cpu {
namespace {

TEST(CpuStepTime, FitsTheLineThroughHandMadeMeasurements) {
  // 9 ms of weights, 1 ms per token, 1 us per attended KV entry.
  const auto step = [](double tokens, double attended) {
    return StepSample{tokens, attended, 0.009 + 0.001 * tokens + 1e-6 * attended};
  };
  const CpuStepCoefficients c = FitCpuStepCoefficients(step(1, 20.5), step(16, 16 * 20.5), step(256, 256 * 128));
  EXPECT_NEAR(c.fixed_s, 0.009, 1e-12);
  EXPECT_NEAR(c.per_token_s, 0.001, 1e-12);
  EXPECT_NEAR(c.per_attended_s, 1e-6, 1e-12);
}

TEST(CpuStepTime, ClampsNoiseAtZero) {
  // The wider decode measured faster than batch 1 and the prefill faster than both: a noisy machine.
  const CpuStepCoefficients c = FitCpuStepCoefficients({1, 20, 0.010}, {16, 320, 0.009}, {256, 32768, 0.001});
  EXPECT_GE(c.fixed_s, 0);
  EXPECT_EQ(c.per_token_s, 0);  // the exact solve says negative
  EXPECT_GE(c.per_attended_s, 0);
}

TEST(CpuStepTime, PredictorSumsTheStepsWork) {
  CpuStepTimePredictor p({0.009, 0.001, 1e-6});
  p.Begin();
  EXPECT_NEAR(p.SecondsWith(100, 1, true), 0.009 + 0.001 + 100.5e-6, 1e-12);
  p.Add(100, 1, true);
  p.Add(0, 64, false);  // a prefill chunk: 64 * 32 attended
  EXPECT_NEAR(p.SecondsWith(0, 0, false), 0.009 + 0.065 + (100.5 + 2048) * 1e-6, 1e-12);
  p.Begin();
  EXPECT_NEAR(p.SecondsWith(0, 0, false), 0.009, 1e-12);
}

// The slo policy's predictor learns the step time it gets: steps that take
// twice the start-up line (a neighbour took a core) double its predictions
// within a few dozen steps; one stalled step moves them little; when the
// machine is free again they come back.
TEST(CpuStepTime, PredictorLearnsTheStepTimeItGets) {
  CpuStepTimePredictor p({0.010, 0.001, 0});
  StepPlan decode;
  decode.requests.resize(4);
  for (auto& r : decode.requests) r.num_new = 1;
  decode.num_batched_tokens = 4;  // as the scheduler counts them
  const double line = 0.014;  // 10 ms + 4 tokens x 1 ms
  EXPECT_DOUBLE_EQ(p.scale(), 1);
  for (int i = 0; i < 60; ++i) p.Observe(decode, 2 * line);
  EXPECT_NEAR(p.scale(), 2, 0.05);
  p.Begin();
  EXPECT_NEAR(p.SecondsWith(0, 1, true), 2 * (0.010 + 0.001), 0.001);
  p.Observe(decode, 100 * line);  // one step the OS stalled: clipped at 8x
  EXPECT_LT(p.scale(), 3.5);
  for (int i = 0; i < 60; ++i) p.Observe(decode, line);
  EXPECT_NEAR(p.scale(), 1, 0.05);
  // Noisy steps (alternately 0.8x and 1.25x the line) are predicted near their upper side.
  for (int i = 0; i < 200; ++i) p.Observe(decode, (i % 2 ? 1.25 : 0.8) * line);
  EXPECT_GT(p.scale(), 1.15);
  EXPECT_LT(p.scale(), 1.4);
  StepPlan empty;
  p.Observe(empty, 1.0);  // an empty step says nothing about the line
  EXPECT_GT(p.scale(), 1.15);
}

// A runner whose steps take a known line of time on a virtual clock: the
// calibration must recover that line from its own measurements.
class LinearTimeRunner final : public ModelRunner {
 public:
  LinearTimeRunner(VirtualClock* clock, CpuStepCoefficients c) : clock_(clock), c_(c) {}
  StepResult Execute(const StepPlan& plan) override {
    StepResult r;
    double attended = 0;
    for (const auto& s : plan.requests) {
      attended += s.num_new * (s.num_computed + s.num_new / 2.0);
      if (s.samples) r.sampled.push_back({s.id, 1, {5}, {}});
    }
    clock_->Elapse(c_.fixed_s + c_.per_token_s * plan.num_batched_tokens + c_.per_attended_s * attended);
    return r;
  }

 private:
  VirtualClock* clock_;
  CpuStepCoefficients c_;
};

TEST(CpuStepTime, CalibrationRecoversAKnownLine) {
  VirtualClock clock;
  const CpuStepCoefficients truth{0.008, 0.0005, 2e-7};
  LinearTimeRunner runner(&clock, truth);
  const std::vector<KvGroupSpec> groups = {KvGroupSpec{}};
  auto cal = CalibrateCpuSteps(runner, groups, 1024, 16, clock);
  ASSERT_TRUE(cal.ok()) << cal.status().message();
  EXPECT_NEAR(cal->fit.fixed_s, truth.fixed_s, 1e-9);
  EXPECT_NEAR(cal->fit.per_token_s, truth.per_token_s, 1e-9);
  EXPECT_NEAR(cal->fit.per_attended_s, truth.per_attended_s, 1e-12);
}

TEST(CpuStepTime, CalibrationRefusesATinyPool) {
  VirtualClock clock;
  LinearTimeRunner runner(&clock, {0.01, 0, 0});
  EXPECT_FALSE(CalibrateCpuSteps(runner, {KvGroupSpec{}}, 8, 16, clock).ok());
}

// The real runner: every coefficient comes out finite and a bigger step is
// predicted to take longer (no timing bound is asserted: the machine is shared).
TEST(CpuStepTime, CalibratesTheRealRunner) {
  const ModelSpec m = *LoadModel("goodput-tiny");
  const CpuKvLayout layout = MakeCpuKvLayout(m, 16);
  auto runner = CpuModelRunner::Create(m, DummyWeights(m, 1), layout, KvFormat::kFp32, 512, 16);
  ASSERT_TRUE(runner.ok());
  RealClock clock;
  auto cal = CalibrateCpuSteps(**runner, layout.groups, 512, 16, clock);
  ASSERT_TRUE(cal.ok()) << cal.status().message();
  EXPECT_GT(cal->decode1.seconds, 0);
  EXPECT_GT(cal->prefill.seconds, cal->decode1.seconds);
  CpuStepTimePredictor p(cal->fit);
  p.Begin();
  EXPECT_GT(p.SecondsWith(0, 256, true), p.SecondsWith(0, 1, true));
}

}  // namespace
}  // namespace goodput::cpu
