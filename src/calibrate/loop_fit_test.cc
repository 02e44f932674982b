#include "calibrate/loop_fit.h"

#include <gtest/gtest.h>

#include "support/temp_file.h"

#include "calibrate/calibration.h"
#include "sim/setup.h"
#include "sim/simulator.h"

namespace goodput {
namespace {

// A loop with known times and chance: between steps 0.3 ms + 0.02 ms per
// request; a follow-up joins the next step with a chance of 0.9 - 0.1 per
// doubling of the step's requests - 0.2 per earlier follow-up of the step,
// else arrives 0.5 ms + 0.03 ms per request + 1 ms per earlier follow-up
// after that step's start; each time spread 0.6x-1.6x.
EngineLoop KnownLoop() {
  EngineLoop loop;
  loop.between_steps = LoopTime{0.0003, 0.00002, 0, {0.6, 0.8, 1.0, 1.2, 1.6}};
  loop.join = JoinChance{0.9, -0.1, -0.2};
  loop.late_follow_up = LoopTime{0.0005, 0.00003, 0.001, {0.6, 0.8, 1.0, 1.2, 1.6}};
  loop.measured = true;
  return loop;
}

// The step log of the simulator running `loop` on a chat workload at `load`,
// written and read back through the step log's text.
std::vector<LoggedStep> SimulatedLog(const std::string& name, const EngineLoop& loop, const ArrivalSpec& load) {
  auto w = ParseWorkload("requests: 300\nclasses:\n  - name: chat\n    prompt: lognormal:400,0.5\n"
                         "    output: lognormal:16,0.5\n",
                         "w.yaml", ".");
  EXPECT_TRUE(w.ok()) << w.status().message();
  auto setup = SetupCatalogSimulation("llama-3.1-8b", "h100-sxm", PlanOptions{});
  EXPECT_TRUE(setup.ok()) << setup.status().message();
  const std::string path = testing::WriteTempFile(name, "");
  {
    SimOptions o = setup->options;
    o.engine_loop = loop;
    auto observer = OpenStepLog(path);
    EXPECT_TRUE(observer.ok());
    o.step_observer = *observer;
    auto run = Simulate(*w, load, o, *setup->cost);
    EXPECT_TRUE(run.ok()) << run.status().message();
  }
  auto log = ReadStepLog(path);
  EXPECT_TRUE(log.ok()) << log.status().message();
  return *log;
}

// The fit finds the loop the simulator ran: its medians at 1 and 16 requests
// within 15%, and a second follow-up's, from closed loops of 4 and 16
// clients (short answers: steps that finish two requests are common).
TEST(FitEngineLoop, RecoversTheLoopASimulatorRan) {
  const EngineLoop truth = KnownLoop();
  const auto fit = FitEngineLoop({SimulatedLog("c4.log", truth, ArrivalSpec{ArrivalKind::kClosedLoop, 4, 1, 1}),
                                  SimulatedLog("c16.log", truth, ArrivalSpec{ArrivalKind::kClosedLoop, 16, 1, 1})});
  ASSERT_TRUE(fit.loop.measured);
  EXPECT_EQ(fit.closed_logs, 2);
  EXPECT_GT(fit.gaps, 1000);
  EXPECT_GT(fit.follow_ups, 500);
  EXPECT_GT(fit.races, 400);
  EXPECT_GT(fit.joined, fit.races / 4);
  EXPECT_LT(fit.joined, fit.races * 3 / 4);
  for (int n : {1, 16}) {
    EXPECT_NEAR(fit.loop.between_steps.Median(n) / truth.between_steps.Median(n), 1.0, 0.15) << n;
    EXPECT_NEAR(fit.loop.late_follow_up.Median(n) / truth.late_follow_up.Median(n), 1.0, 0.15) << n;
    EXPECT_NEAR(fit.loop.late_follow_up.Median(n, 1) / truth.late_follow_up.Median(n, 1), 1.0, 0.15) << n << ", rank 1";
  }
  for (int n : {4, 16}) {
    EXPECT_NEAR(fit.loop.join.At(n), truth.join.At(n), 0.08) << n;
    EXPECT_NEAR(fit.loop.join.At(n, 1), truth.join.At(n, 1), 0.08) << n << ", rank 1";
  }
  EXPECT_EQ(fit.loop.between_steps.per_rank_s, 0) << "steps have no rank";
  ASSERT_EQ(fit.loop.late_follow_up.spread.size(), 20u);
  EXPECT_NEAR(fit.loop.late_follow_up.spread.front(), 0.6, 0.1);
  // A time over its fitted median, which the checks above allow 15% off (at
  // 16 requests one draw of the simulator's fits it 10% low): 1.6 x 15%.
  EXPECT_NEAR(fit.loop.late_follow_up.spread.back(), 1.6, 0.25);
}

// In an open loop arrivals do not follow finishes: the time between steps is
// measured, the follow-up's chance and time keep their defaults. An untimed (version 1) log
// measures nothing.
TEST(FitEngineLoop, PairsFollowUpsOnlyInClosedLoops) {
  const auto open =
      FitEngineLoop({SimulatedLog("open.log", KnownLoop(), ArrivalSpec{ArrivalKind::kPoisson, 20, 1, 1})});
  EXPECT_EQ(open.closed_logs, 0);
  EXPECT_EQ(open.follow_ups, 0);
  ASSERT_TRUE(open.loop.measured);
  EXPECT_NEAR(open.loop.between_steps.Median(4) / KnownLoop().between_steps.Median(4), 1.0, 0.15);
  EXPECT_EQ(open.races, 0);
  EXPECT_DOUBLE_EQ(open.loop.join.At(4), 0);
  EXPECT_DOUBLE_EQ(open.loop.late_follow_up.Median(4), EngineLoop{}.late_follow_up.Median(4));
  const std::string v1 = "# goodput step log v1: seconds, requests, then computed new samples per request\n";
  std::string lines;
  for (int i = 0; i < 100; ++i) lines += "0.01 1  " + std::to_string(100 + i) + " 1 1\n";
  auto untimed = ReadStepLog(testing::WriteTempFile("v1.log", v1 + lines));
  ASSERT_TRUE(untimed.ok());
  EXPECT_FALSE(FitEngineLoop({*untimed}).loop.measured);
}

// The loop travels in the calibration file and back; a broken one is named.
TEST(FitEngineLoop, TravelsInTheCalibrationFile) {
  Calibration c;
  c.hardware.name = "cpu";
  c.hardware.memory_bytes = 1 << 30;
  c.factors.peak_flops = 1e11;
  c.factors.bandwidth = 1e10;
  c.engine_loop.loop = KnownLoop();
  c.engine_loop.gaps = 1200;
  c.engine_loop.follow_ups = 300;
  c.engine_loop.races = 250;
  c.engine_loop.joined = 150;
  c.engine_loop.closed_logs = 2;
  const std::string text = CalibrationToJson(c);
  auto back = ParseCalibration(text, "cal.json");
  ASSERT_TRUE(back.ok()) << back.status().message();
  ASSERT_TRUE(back->engine_loop.loop.measured);
  EXPECT_DOUBLE_EQ(back->engine_loop.loop.late_follow_up.Median(8, 2), KnownLoop().late_follow_up.Median(8, 2));
  EXPECT_DOUBLE_EQ(back->engine_loop.loop.join.At(8, 1), KnownLoop().join.At(8, 1));
  EXPECT_EQ(back->engine_loop.joined, 150);
  EXPECT_EQ(back->engine_loop.loop.between_steps.spread, KnownLoop().between_steps.spread);
  EXPECT_EQ(back->engine_loop.gaps, 1200);
  const std::string printed = FormatResiduals(*back);
  EXPECT_NE(printed.find("after the next step's start: median 0.53 ms at 1 request, 1.46 at 32, +1.00 per earlier "
                         "follow-up"),
            std::string::npos)
      << printed;
  EXPECT_NE(printed.find("joined the next step 150 of 250 times (300 finishes paired in 2 closed-loop logs): a "
                         "chance of 0.90 after a step of 1 request, 0.40 after 32, -0.20 per earlier follow-up"),
            std::string::npos)
      << printed;

  Calibration unmeasured = c;
  unmeasured.engine_loop = EngineLoopFit{};
  auto plain = ParseCalibration(CalibrationToJson(unmeasured), "plain.json");
  ASSERT_TRUE(plain.ok()) << plain.status().message();
  EXPECT_FALSE(plain->engine_loop.loop.measured);

  const auto broken = [&](const std::string& from, const std::string& to) {
    std::string t = text;
    const size_t at = t.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    t.replace(at, from.size(), to);
    auto r = ParseCalibration(t, "cal.json");
    return r.ok() ? std::string("parsed") : r.status().message();
  };
  EXPECT_EQ(broken("\"spread\": [0.6, 0.8", "\"spread\": [0.9, 0.8"),
            "cal.json: engine_loop: between_steps: spread must list positive ratios, rising");
  EXPECT_EQ(broken("\"base_s\": 0.0003", "\"base_s\": -0.0003"),
            "cal.json: engine_loop: between_steps: times must be >= 0");
  EXPECT_EQ(broken("\"per_rank_s\": 0.001", "\"per_rank_s\": \"x\""),
            "cal.json: engine_loop: late_follow_up: 'per_rank_s' must be a number");
  EXPECT_EQ(broken("\"late_follow_up\": {", "\"late_follow_upx\": {"),
            "cal.json: engine_loop: 'late_follow_up' must be an object");
  EXPECT_EQ(broken("\"base\": 0.9", "\"base\": true"), "cal.json: engine_loop: join: 'base' must be a number");
  EXPECT_EQ(broken("\"base\": 0.9", "\"basis\": 0.9"), "cal.json: engine_loop: join: 'base' is required");
  EXPECT_EQ(broken("\"per_doubling\": -0.1", "\"per_doubling\": null, \"x\": 1"), "parsed")
      << "a missing slope is flat";
  // A file of the tree before the chance: one follow-up time from the finish.
  std::string old = text;
  old.replace(old.find("\"join\""), 6, "\"joins\"");
  old.replace(old.find("\"late_follow_up\""), 16, "\"follow_up\"");
  auto earlier = ParseCalibration(old, "old.json");
  ASSERT_FALSE(earlier.ok());
  EXPECT_NE(earlier.status().message().find("written by an earlier goodput"), std::string::npos)
      << earlier.status().message();
}

}  // namespace
}  // namespace goodput
