// The cost model across GPUs: tensor-parallel all-reduces, expert parallelism
// and its imbalance, routed experts at their own kernel's efficiency, and
// data-parallel replicas, each checked by hand or against a published timing.
#include "hw/cost_model.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "hw/kernel_count.h"
#include "model/catalog.h"

namespace goodput {
namespace {

// `name` in bf16, its weights split over 4 GPUs by tensor parallelism.
DeployedModel Bf16Over4(const std::string& name) {
  DeployedModel d;
  d.model = *LoadModel(name);
  d.params = CountParams(d.model);
  d.weight_bytes = d.params.total() * 2 / 4;
  d.tensor_parallel = 4;
  return d;
}

// Tensor parallelism: two ring all-reduces of the step's bf16 activations per
// layer. Llama-3.1-8B (32 layers, hidden 4096) on 4 H100s, 512 tokens:
// payload 512 x 4096 x 2 = 4 MiB; per all-reduce 15 us + 2 x 3/4 x 4 MiB /
// 450 GB/s = 28.98 us; 64 of them: 1.855 ms. One GPU has none.
TEST(CostModel, TensorParallelAllReducesByHand) {
  DeployedModel d = Bf16Over4("llama-3.1-8b");
  CostModel tp4(d, *FactorsFor(*FindGpu("h100-sxm"), "bf16"));
  CostModel::Step s;
  tp4.Add(s, 0, 512, true);
  const double per_reduce = 15e-6 + 2.0 * 3 / 4 * (512.0 * 4096 * 2) / 450e9;
  EXPECT_NEAR(tp4.CommunicationSeconds(s), 64 * per_reduce, 1e-12);
  d.tensor_parallel = 1;
  CostModel tp1(d, *FactorsFor(*FindGpu("h100-sxm"), "bf16"));
  EXPECT_EQ(tp1.CommunicationSeconds(s), 0);
}

// What every tensor-parallel GPU holds whole it also multiplies whole: each of
// DeepSeek-V3's eight GPUs runs MLA's down-projections and the routers for
// all 4,096 tokens, 2 x (61 x 7,168 x 2,112 + 58 x 7,168 x 256) FLOPs a token,
// and an eighth of the rest of the dense layers.
TEST(CostModel, TensorParallelGpusMultiplyWhatTheyHoldWhole) {
  DeployedModel d = Bf16Over4("deepseek-v3");
  d.tensor_parallel = 8;
  const auto f = *FactorsFor(*FindGpu("h200"), "bf16");
  CostModel tp8(d, f);
  d.tensor_parallel = 1;
  CostModel tp1(d, f);
  CostModel::Step s;
  tp8.Add(s, 0, 4096, true);
  const double dense8 = tp8.MatmulSeconds(s) - tp8.ExpertMatmulSeconds(s);
  const double dense1 = tp1.MatmulSeconds(s) - tp1.ExpertMatmulSeconds(s);
  const double whole = 2.0 * (61.0 * 7168 * 2112 + 58.0 * 7168 * 256) * 4096;
  EXPECT_NEAR(dense8 - dense1 / 8, whole * 7 / 8 / (f.peak_flops * f.EfficiencyAt(4096)), 1e-9);
}

// DeepSeek-V3 in NVFP4 over eight GPUs with a drafter of 500M parameters a GPU.
DeployedModel Nvfp4DeepSeekOnEightB200WithADrafter() {
  DeployedModel d = Bf16Over4("deepseek-v3");
  d.tensor_parallel = 8;
  d.weight_precision = "nvfp4";
  d.draft_params = 500'000'000;
  d.draft_layers = 1;
  return d;
}

// What a checkpoint leaves unquantized multiplies at the 16-bit rate, as the
// LM head does: NVIDIA's NVFP4 DeepSeek-R1 on eight B200s with its attention
// in bf16 spends, on 2,048 tokens, (attention's FLOPs per GPU) x (1 / the
// head's rate - 1) more than with every dense layer in NVFP4; its drafter,
// left in bf16 too, runs all its layers at that rate.
TEST(CostModel, UnquantizedPartsMultiplyAtTheSixteenBitRate) {
  DeployedModel d = Nvfp4DeepSeekOnEightB200WithADrafter();
  const auto f = *FactorsFor(*FindGpu("b200"), "nvfp4");
  ASSERT_LT(f.head_rate, 1);  // bf16 runs slower than NVFP4 on a B200
  CostModel quantized(d, f);
  d.unquantized.attention = true;
  d.unquantized.draft = true;
  CostModel kept(d, f);
  CostModel::Step s;
  kept.Add(s, 0, 2048, true, 1);
  const double attention = 2.0 * UnquantizedParamsPerGpu(d.params, d.unquantized, 8) * 2048;
  const double rate = f.peak_flops * f.EfficiencyAt(2048);
  EXPECT_NEAR(kept.MatmulSeconds(s) - quantized.MatmulSeconds(s), attention * (1 / f.head_rate - 1) / rate, 1e-9);
  for (int i = 1; i < 4096; ++i) kept.Add(s, 100, 1, true, 1);  // compute-bound drafting
  const double head = 2.0 * 129'280 * 7'168 / 8 / 2;
  const double layers = 2.0 * (5e8 - head) * s.drafting;
  // Less the activation-quantizing kernels a bf16 drafter does not launch.
  const int fewer = KernelsPerDraftPass(d.model, 1, "nvfp4") - KernelsPerDraftPass(d.model, 1, "bf16");
  ASSERT_GT(fewer, 0);
  EXPECT_NEAR(kept.DraftSeconds(s) - quantized.DraftSeconds(s),
              layers * (1 / f.head_rate - 1) / (f.peak_flops * f.EfficiencyAt(s.drafting)) - fewer * f.kernel_latency_s,
              1e-9);
}

// A drafter's join (DeepSeek's eh_proj, EAGLE's fc) is a bf16 linear layer
// in an NVFP4 checkpoint: of the same parameters, naming 2 x 7,168 x 7,168 of
// them the join moves them to the 16-bit rate.
TEST(CostModel, ADraftersJoinMultipliesAtTheSixteenBitRate) {
  DeployedModel d = Nvfp4DeepSeekOnEightB200WithADrafter();
  const auto f = *FactorsFor(*FindGpu("b200"), "nvfp4");
  CostModel without(d, f);
  d.draft_join_params = 2 * 7'168 * 7'168;
  CostModel with(d, f);
  CostModel::Step s;
  for (int i = 0; i < 4096; ++i) with.Add(s, 100, 1, true, 1);  // compute-bound drafting
  EXPECT_NEAR(
      with.DraftSeconds(s) - without.DraftSeconds(s),
      2.0 * d.draft_join_params * s.drafting * (1 / f.head_rate - 1) / (f.peak_flops * f.EfficiencyAt(s.drafting)),
      1e-9);
}

// Expert parallelism: the busiest GPU computes imbalance x its share of the
// routed work; with an even split it is the same as slicing every expert.
TEST(CostModel, ExpertParallelImbalanceSlowsTheBusiestGpu) {
  DeployedModel d = Bf16Over4("qwen3-30b-a3b");
  auto f = *FactorsFor(*FindGpu("h100-sxm"), "bf16");
  CostModel sliced(d, f);
  d.expert_parallel = 4;
  d.routing_imbalance = 1.0;
  CostModel even(d, f);
  d.routing_imbalance = 1.5;
  CostModel skewed(d, f);
  CostModel::Step s;
  sliced.Add(s, 0, 2048, true);
  EXPECT_NEAR(even.MatmulSeconds(s), sliced.MatmulSeconds(s), 1e-12);
  const double dense = sliced.MatmulSeconds(s) - 2.0 * d.params.routed_experts * 8 / 128 / 4 * 2048 /
                                                     (f.peak_flops * f.compute_efficiency);
  EXPECT_NEAR(skewed.MatmulSeconds(s) - dense, 1.5 * (sliced.MatmulSeconds(s) - dense), 1e-9);
}

// Qwen3-30B-A3B (48 MoE layers of 128 experts, 8 a token) in FP8 on one GPU.
DeployedModel Fp8Qwen3MoeOnOneGpu() {
  DeployedModel d = Bf16Over4("qwen3-30b-a3b");
  d.tensor_parallel = 1;
  d.weight_precision = "fp8";
  d.weight_bytes = d.params.total();  // a byte a parameter
  return d;
}

// The routed experts run at the card's grouped-GEMM efficiency where it has
// one (FP8 on Hopper), the rest of the matmuls at the dense one: Qwen3-30B-A3B
// on one H100, 2,048 tokens, by hand.
TEST(CostModel, RoutedExpertsRunAtTheirOwnEfficiency) {
  const HardwareSpec h100 = *FindGpu("h100-sxm");
  const DeployedModel d = Fp8Qwen3MoeOnOneGpu();
  const CostFactors fp8 = *FactorsFor(h100, "fp8");
  const CostFactors bf16 = *FactorsFor(h100, "bf16");
  EXPECT_DOUBLE_EQ(fp8.expert_efficiency, h100.ExpertEfficiencyFor("fp8"));
  EXPECT_GT(fp8.expert_efficiency, 0);
  EXPECT_EQ(bf16.expert_efficiency, 0);  // BF16 experts reach the dense efficiency
  CostModel m(d, fp8);
  CostModel::Step s;
  m.Add(s, 0, 2048, true);
  const double expert_flops = 2.0 * static_cast<double>(d.params.routed_experts) * 8 / 128 * 2048;
  EXPECT_NEAR(m.ExpertMatmulSeconds(s), expert_flops / (fp8.peak_flops * fp8.expert_efficiency), 1e-12);
  CostFactors dense_experts = fp8;
  dense_experts.expert_efficiency = 0;
  CostModel dense(d, dense_experts);
  EXPECT_NEAR(dense.ExpertMatmulSeconds(s), expert_flops / (fp8.peak_flops * fp8.compute_efficiency), 1e-12);
  EXPECT_NEAR(m.MatmulSeconds(s) - m.ExpertMatmulSeconds(s), dense.MatmulSeconds(s) - dense.ExpertMatmulSeconds(s),
              1e-12);
}

// The entry's figure against the kernel timings it comes from (vLLM pull
// request #24700, benchmark_moe.py, one Qwen3-30B-A3B MoE layer in FP8 on an
// H100): the layer's experts under the card's roofline, their FLOPs at the
// expert efficiency and their 604 MB (128 x 3 x 768 x 2,048 bytes) read at the
// card's bandwidth, within 10% of the published 536 / 912 / 1,648 us at
// 1,024 / 2,048 / 4,096 tokens (the 48 layers' matmul time split evenly).
TEST(CostModel, ExpertEfficiencyReproducesThePublishedMoeKernel) {
  const CostFactors f = *FactorsFor(*FindGpu("h100-sxm"), "fp8");
  CostModel m(Fp8Qwen3MoeOnOneGpu(), f);
  const double layer_bytes = 128.0 * 3 * 768 * 2048;
  for (const auto& [tokens, published_us] : {std::pair{1024, 536.33}, {2048, 911.64}, {4096, 1647.57}}) {
    CostModel::Step s;
    m.Add(s, 0, tokens, false);
    const double touched = 1 - std::pow(1 - 8.0 / 128, tokens);
    const double read = layer_bytes * touched / (f.bandwidth * f.bandwidth_efficiency);
    const double us = RooflineSeconds(m.ExpertMatmulSeconds(s) / 48, read, f.overlap) * 1e6;
    EXPECT_NEAR(us / published_us, 1.0, 0.10) << tokens << " tokens: " << us << " us";
  }
}

// Data parallelism: Qwen3-30B-A3B (48 layers, all MoE: 128 experts, 8 per
// token; hidden 2048) as four one-GPU replicas with whole experts per GPU,
// 256 decodes of 1,000 tokens of context over all four. Each GPU attends and
// reads the KV of its 64 requests (a quarter), computes the dense layers and
// LM head for its 64 tokens and its quarter of all 256 tokens' expert work;
// by hand, against one GPU holding everything. The tokens travel to their
// experts and back as vLLM's default all-to-all moves them: per MoE layer an
// all-gather and a reduce-scatter of all 256 tokens' 4 KB activations, a
// ring moving three quarters of it, at 450 GB/s plus 15 us each.
TEST(CostModel, DataParallelReplicasShareTheStepByHand) {
  DeployedModel one;
  one.model = *LoadModel("qwen3-30b-a3b");
  one.params = CountParams(one.model);
  one.weight_bytes = one.params.total() * 2;
  one.full_bytes_per_token = 48 * 2 * 4 * 128 * 2;
  DeployedModel dp = one;
  dp.data_parallel = 4;
  dp.expert_parallel = 4;
  auto f = *FactorsFor(*FindGpu("h100-sxm"), "bf16");
  f.efficiency_curve.clear();
  CostModel a(one, f), b(dp, f);
  CostModel::Step s;
  for (int i = 0; i < 256; ++i) a.Add(s, 1000, 1, true);
  EXPECT_NEAR(b.KvSeconds(s), a.KvSeconds(s) / 4, 1e-12);
  EXPECT_NEAR(b.AttentionSeconds(s), a.AttentionSeconds(s) / 4, 1e-12);
  const double experts = 2.0 * static_cast<double>(one.params.routed_experts) * 8 / 128 * 256;
  const double rate = f.peak_flops * f.compute_efficiency;
  const double dense = a.MatmulSeconds(s) - experts / rate;
  EXPECT_NEAR(b.MatmulSeconds(s), dense / 4 + experts / 4 / rate, 1e-12);
  const double all_to_all = 15e-6 + 3.0 / 4 * 256 * 2048 * 2 / 450e9;
  EXPECT_NEAR(b.CommunicationSeconds(s), 2 * 48 * all_to_all, 1e-12);
  EXPECT_EQ(a.CommunicationSeconds(s), 0);
}

}  // namespace
}  // namespace goodput
