#include "hw/cost_model.h"

#include <gtest/gtest.h>

#include "model/catalog.h"

namespace goodput {
namespace {

// Llama-3.1-8B in bf16 on one H100 SXM, built by hand (no planner).
CostModel Llama8B() {
  DeployedModel d;
  d.model = *LoadModel("llama-3.1-8b");
  d.params = CountParams(d.model);
  d.weight_bytes = d.params.total() * 2;
  d.full_bytes_per_token = 131072;
  auto f = FactorsFor(*FindGpu("h100-sxm"), "bf16");
  EXPECT_TRUE(f.ok());
  return CostModel(d, *f);
}

// Batch 1 decode at empty context is memory-bound: overhead + (weights + one
// token of KV) / (3.35 TB/s x 0.85).
TEST(CostModel, SingleDecodeReadsTheWeights) {
  CostModel m = Llama8B();
  CostModel::Step s;
  m.Add(s, 0, 1, true);
  const double bytes = 8'030'261'248.0 * 2 + 131072;
  EXPECT_NEAR(m.Seconds(s), 0.0005 + bytes / (3.35e12 * 0.85), 1e-9);
  EXPECT_LT(m.ComputeSeconds(s), m.MemorySeconds(s));
}

// Seed 000: batching B decodes costs almost nothing while bandwidth-bound, so
// throughput ~ B / step grows nearly in proportion; past the ridge it flattens.
TEST(CostModel, BatchingIsFreeUntilTheRidge) {
  CostModel m = Llama8B();
  auto step = [&](int batch) {
    CostModel::Step s;
    for (int i = 0; i < batch; ++i) m.Add(s, 0, 1, true);
    return m.Seconds(s);
  };
  EXPECT_LT(step(32) / step(1), 1.05);          // 32x the tokens for < 5% more time
  EXPECT_GT(step(4096) / step(2048), 1.9);      // compute-bound: time doubles with tokens
}

TEST(CostModel, KvContextAddsBytesPerRequest) {
  CostModel m = Llama8B();
  CostModel::Step empty, full;
  for (int i = 0; i < 64; ++i) {
    m.Add(empty, 0, 1, true);
    m.Add(full, 8192, 1, true);
  }
  EXPECT_NEAR(full.kv_bytes - empty.kv_bytes, 64.0 * 8192 * 131072, 1);
  EXPECT_GT(m.Seconds(full), 1.5 * m.Seconds(empty));
}

TEST(CostModel, SlidingWindowCapsAttention) {
  DeployedModel d;
  d.model = *LoadModel("gpt-oss-20b");
  d.params = CountParams(d.model);
  d.sliding_window = 4;
  CostModel m(d, *FactorsFor(*FindGpu("h100-sxm"), "bf16"));
  CostModel::Step a, b;
  m.Add(a, 0, 10, true);  // keys per token: 1, 2, 3, 4, 4, ... -> 1 + 2 + 3 + 4 * 7 = 34
  EXPECT_DOUBLE_EQ(a.attn_pairs_sliding, 34);
  EXPECT_DOUBLE_EQ(a.attn_pairs_full, 55);  // 1 + 2 + ... + 10
  m.Add(b, 8, 2, true);                     // already past the window: 4 + 4
  EXPECT_DOUBLE_EQ(b.attn_pairs_sliding, 8);
}

// One token reads 4 of 128 experts per layer; a thousand tokens read nearly all.
TEST(CostModel, MoeReadsOnlyTouchedExperts) {
  DeployedModel d;
  d.model = *LoadModel("gpt-oss-120b");
  d.params = CountParams(d.model);
  d.weight_bytes = 60'000'000'000;
  d.expert_weight_bytes = 57'000'000'000;
  CostModel m(d, *FactorsFor(*FindGpu("h100-sxm"), "mxfp4"));
  CostModel::Step one, many;
  m.Add(one, 0, 1, true);
  m.Add(many, 0, 1000, false);
  const double bw = 3.35e12 * 0.85;
  EXPECT_NEAR(m.MemorySeconds(one) * bw, 3e9 + 57e9 * 4.0 / 128, 1e6);
  EXPECT_GT(m.MemorySeconds(many) * bw, 59.9e9);
}

TEST(CostModel, PrecisionPicksTheTensorCorePeak) {
  auto b200 = *FindGpu("b200");
  EXPECT_DOUBLE_EQ(FactorsFor(b200, "bf16")->peak_flops, 2.25e15);
  EXPECT_DOUBLE_EQ(FactorsFor(b200, "fp8")->peak_flops, 4.5e15);
  EXPECT_DOUBLE_EQ(FactorsFor(b200, "nvfp4")->peak_flops, 9.0e15);
  EXPECT_DOUBLE_EQ(FactorsFor(b200, "int4")->peak_flops, 2.25e15);  // weight-only: BF16 math
  EXPECT_DOUBLE_EQ(FactorsFor(*FindGpu("a100"), "fp8")->peak_flops, 312e12);  // no FP8 cores
}

}  // namespace
}  // namespace goodput
