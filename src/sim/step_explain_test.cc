#include "sim/step_explain.h"

#include <boost/json.hpp>
#include <gtest/gtest.h>

#include "sim/setup.h"

namespace goodput {
namespace {

TEST(StepBatch, ParsesDecodesAndPrompts) {
  auto b = ParseStepBatch("64@32k, 1@0+4096");
  ASSERT_TRUE(b.ok()) << b.status().message();
  ASSERT_EQ(b->size(), 2u);
  EXPECT_EQ((*b)[0].requests, 64);
  EXPECT_EQ((*b)[0].context, 32000);
  EXPECT_TRUE((*b)[0].decode);
  EXPECT_EQ((*b)[1].requests, 1);
  EXPECT_EQ((*b)[1].context, 0);
  EXPECT_EQ((*b)[1].new_tokens, 4096);
  EXPECT_FALSE((*b)[1].decode);
}

TEST(StepBatch, RefusesBrokenGroupsNamingThem) {
  for (const char* text : {"", "64", "0@10", "x@1", "1@-5", "1@10+0", "1@1+x", "2000000@1", "1@268435456+1",
                           "1@268435457", "64@2048,", "1@@2", "1048576@1,1@1"}) {
    auto b = ParseStepBatch(text);
    ASSERT_FALSE(b.ok()) << text;
    EXPECT_EQ(b.status().message().rfind("--explain-step", 0), 0u) << b.status().message();
  }
  const std::string m = ParseStepBatch("8@1k,3@x").status().message();
  EXPECT_NE(m.find("'3@x'"), std::string::npos) << m;
}

// One decode of Llama-3.1-8B in BF16 on an H100 reads the weights once: by
// hand, 8,030,261,248 parameters less the untied input embedding (128,256 x
// 4,096) at 2 bytes, over 3.35 TB/s at the entry's 0.89 efficiency: 5.034 ms.
TEST(ExplainStep, OneDecodeReadsTheWeights) {
  auto setup = SetupCatalogSimulation("llama-3.1-8b", "h100", PlanOptions{});
  ASSERT_TRUE(setup.ok()) << setup.status().message();
  auto batch = ParseStepBatch("1@0");
  ASSERT_TRUE(batch.ok());
  const StepExplanation e = ExplainStep(*setup->cost, *batch, 0);
  const double by_hand = (8030261248.0 - 128256.0 * 4096) * 2 / (3.35e12 * 0.89);
  EXPECT_NEAR(e.cost.weights, by_hand, by_hand * 0.005);
  EXPECT_EQ(e.step.tokens, 1);
  const std::string text = FormatStepExplanation(e);
  EXPECT_NE(text.find("bound by: weight reads"), std::string::npos) << text;
}

// The parts add up to the step the simulator charges; a long prompt is bound
// by its matmuls, a large decode batch under a costly host by the host.
TEST(ExplainStep, PartsAddUpToTheSimulatorsStep) {
  auto setup = SetupCatalogSimulation("llama-3.1-8b", "h100", PlanOptions{}, "vllm");
  ASSERT_TRUE(setup.ok()) << setup.status().message();
  const CostModel& model = *setup->cost;
  for (const char* text : {"1@0+8192", "256@2048", "32@1000,1@0+2048"}) {
    const StepExplanation e = ExplainStep(model, *ParseStepBatch(text), 0);
    const CostModel::StepCost& c = e.cost;
    EXPECT_GT(c.elementwise, 0) << text;
    EXPECT_NEAR(c.gpu, c.matmul_phase + c.attention_phase + c.elementwise + c.communication + c.drafting + c.kernels,
                1e-12);
    EXPECT_DOUBLE_EQ(StepExplanationToJson(e).at("seconds").at("elementwise").as_double(), c.elementwise);
    EXPECT_NEAR(c.total, c.host + c.gpu, 1e-12) << text;  // vLLM's entry: no async scheduling
    EXPECT_DOUBLE_EQ(model.Seconds(e.step), c.total);
    EXPECT_GE(c.matmul_phase, std::max(c.matmul, c.weights));
  }
  const auto prompt = ExplainStep(model, *ParseStepBatch("1@0+8192"), 0);
  EXPECT_EQ(StepExplanationToJson(prompt).at("bound").as_string(), "matmul compute");
  const CostFactors& f = model.factors();
  const auto decodes = ExplainStep(model, *ParseStepBatch("256@2048"), 0);
  EXPECT_NEAR(decodes.cost.host, f.step_overhead_s + 256 * f.per_sequence_s, 1e-12);
}

// Decodes carry the step's drafts: 1 + k tokens each, and the drafter's passes.
TEST(ExplainStep, DecodesCarryTheirDrafts) {
  auto setup = SetupCatalogSimulation("llama-3.1-8b", "h100", PlanOptions{});
  ASSERT_TRUE(setup.ok());
  const StepExplanation plain = ExplainStep(*setup->cost, *ParseStepBatch("4@100,1@0+50"), 0);
  const StepExplanation drafted = ExplainStep(*setup->cost, *ParseStepBatch("4@100,1@0+50"), 3);
  EXPECT_EQ(plain.step.tokens, 4 + 50);
  EXPECT_EQ(drafted.step.tokens, 4 * 4 + 50);
  const auto json = StepExplanationToJson(drafted);
  EXPECT_EQ(json.at("groups").at(0).at("new_tokens").as_int64(), 4);
  EXPECT_EQ(json.at("groups").at(1).at("new_tokens").as_int64(), 50);
}

// Under async scheduling a host shorter than the GPU's work hides behind it:
// the step is the GPU's, and the host is not what bounds it even when it
// exceeds every single GPU part.
TEST(ExplainStep, AHiddenHostDoesNotBound) {
  auto setup = SetupCatalogSimulation("llama-3.1-8b", "h100", PlanOptions{}, "trtllm");
  ASSERT_TRUE(setup.ok());
  const auto batch = *ParseStepBatch("64@1000");
  CostOverrides none;
  none.per_sequence_s = 0, none.step_overhead_s = 0;
  ASSERT_TRUE(ApplyCostOverrides(none, "test", *setup).ok());
  const CostModel::StepCost gpu = ExplainStep(*setup->cost, batch, 0).cost;
  CostOverrides between;
  between.step_overhead_s = (std::max(gpu.matmul_phase, gpu.attention_phase) + gpu.gpu) / 2;
  ASSERT_TRUE(ApplyCostOverrides(between, "test", *setup).ok());
  const StepExplanation e = ExplainStep(*setup->cost, batch, 0);
  EXPECT_GT(e.cost.host, std::max(e.cost.matmul_phase, e.cost.attention_phase));
  EXPECT_DOUBLE_EQ(e.cost.total, e.cost.gpu);
  EXPECT_NE(StepExplanationToJson(e).at("bound").as_string(), "host");
  CostOverrides slow;
  slow.step_overhead_s = 2 * gpu.gpu;
  ASSERT_TRUE(ApplyCostOverrides(slow, "test", *setup).ok());
  EXPECT_EQ(StepExplanationToJson(ExplainStep(*setup->cost, batch, 0)).at("bound").as_string(), "host");
}

}  // namespace
}  // namespace goodput
