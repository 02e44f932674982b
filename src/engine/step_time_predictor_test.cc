#include "engine/step_time_predictor.h"

#include <gtest/gtest.h>

#include "model/catalog.h"
#include "model/params.h"

namespace goodput {
namespace {

// A cost model whose steps are 10 ms plus 1 ms per token (matmuls at a fixed
// rate; no weights, KV or attention to read).
CostModel LinePrior() {
  DeployedModel m;
  m.model = *LoadModel("goodput-tiny");
  m.params = CountParams(m.model);
  CostFactors f;
  f.peak_flops = 1;
  f.compute_efficiency = 1;
  f.bandwidth = 1e30;
  f.step_overhead_s = 0.010;
  f.kernel_latency_s = 0;
  f.attention_curve = {{1, 1e30}};  // attention negligible
  CostModel probe(m, f);
  CostModel::Step one;
  probe.Add(one, 0, 1, false);
  f.peak_flops = probe.MatmulSeconds(one) / 0.001;  // one token's matmuls: 1 ms
  return CostModel(m, f);
}

StepPlan Decode(int n) {
  StepPlan plan;
  plan.requests.resize(static_cast<size_t>(n));
  for (auto& r : plan.requests) r.num_new = 1;
  plan.num_batched_tokens = n;
  return plan;
}

TEST(AdaptiveStepTimePredictor, SumsTheStepsWorkThroughTheCostModel) {
  const CostModel prior = LinePrior();
  AdaptiveStepTimePredictor p(&prior);
  p.Begin();
  EXPECT_NEAR(p.SecondsWith(0, 1, false), 0.011, 1e-6);
  p.Add(0, 1, false);
  p.Add(0, 63, false);
  EXPECT_NEAR(p.SecondsWith(0, 1, false), 0.010 + 0.065, 1e-6);
  p.Begin();  // a new step: nothing added yet
  EXPECT_NEAR(p.SecondsWith(0, 1, false), 0.011, 1e-6);
}

// The slo policy's predictor learns the step time it gets: steps that take
// twice the prior (a neighbour took a core) double its predictions within a
// few dozen steps; one stalled step moves them little; when the machine is
// free again they come back; noisy steps are predicted near their upper side.
TEST(AdaptiveStepTimePredictor, LearnsTheStepTimeItGets) {
  const CostModel prior = LinePrior();
  AdaptiveStepTimePredictor p(&prior);
  const StepPlan decode = Decode(4);
  const double line = 0.014;  // 10 ms + 4 tokens x 1 ms
  EXPECT_DOUBLE_EQ(p.scale(), 1);
  for (int i = 0; i < 60; ++i) p.Observe(decode, 2 * line);
  EXPECT_NEAR(p.scale(), 2, 0.05);
  p.Begin();
  EXPECT_NEAR(p.SecondsWith(0, 1, false), 2 * 0.011, 0.001);
  p.Observe(decode, 100 * line);  // one step the OS stalled: clipped at 8x
  EXPECT_LT(p.scale(), 3.5);
  for (int i = 0; i < 60; ++i) p.Observe(decode, line);
  EXPECT_NEAR(p.scale(), 1, 0.05);
  for (int i = 0; i < 200; ++i) p.Observe(decode, (i % 2 ? 1.25 : 0.8) * line);
  EXPECT_GT(p.scale(), 1.15);
  EXPECT_LT(p.scale(), 1.4);
  p.Observe(StepPlan{}, 1.0);  // an empty step says nothing
  p.Observe(decode, 0);        // nor a step of no time
  EXPECT_GT(p.scale(), 1.15);
}

// Steps that take exactly what the prior says (the simulator's) leave the
// scale at 1.
TEST(AdaptiveStepTimePredictor, StaysAtOneWhenThePriorIsExact) {
  const CostModel prior = LinePrior();
  AdaptiveStepTimePredictor p(&prior);
  for (int n = 1; n < 50; ++n) p.Observe(Decode(n), 0.010 + 0.001 * n);
  EXPECT_NEAR(p.scale(), 1, 1e-9);
}

}  // namespace
}  // namespace goodput
