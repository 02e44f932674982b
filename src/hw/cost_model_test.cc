#include "hw/cost_model.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

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

// The H100 entry's effective bandwidth: 3.35 TB/s x its fitted efficiency.
double H100Bandwidth() { return 3.35e12 * FindGpu("h100-sxm")->bandwidth_efficiency; }

// Batch 1 decode at empty context is memory-bound: overhead + the forward
// pass's 325 kernels (kernel_count_test.cc) at the card's kernel latency +
// (weights + one token of KV + the token's norm and activation passes) /
// effective bandwidth, + the share of the compute that does not hide under
// it (1 - the catalog's overlap).
TEST(CostModel, SingleDecodeReadsTheWeights) {
  CostModel m = Llama8B();
  CostModel::Step s;
  m.Add(s, 0, 1, true);
  const double elementwise = 32 * (16 * 4096 + 6 * 14336);  // 32 layers, hidden 4,096, FFN 14,336
  const double bytes = 8'030'261'248.0 * 2 + 131072 + elementwise;
  const double kernels = 325 * FindGpu("h100-sxm")->kernel_latency_s;
  EXPECT_GT(kernels, 0);
  EXPECT_NEAR(m.KernelSeconds(s), kernels, 1e-12);
  const double hidden = FindGpu("h100-sxm")->overlap;
  EXPECT_DOUBLE_EQ(hidden, 0.5);
  EXPECT_NEAR(m.Seconds(s), 0.0005 + kernels + bytes / H100Bandwidth() + (1 - hidden) * m.ComputeSeconds(s), 1e-9);
  EXPECT_LT(m.ComputeSeconds(s), m.MemorySeconds(s));
}

// The kernels between the matmuls, by hand: per token and layer a fused
// residual-add + RMSNorm pass for each of its norms (8 x hidden bytes each)
// and the FFN's activation-and-multiply (6 x its width on a GPU); a MoE
// layer's width is its k routed experts', a layer without an MLP has none.
// Each GPU of a replica passes over the replica's tokens, so data
// parallelism halves a GPU's share of a step.
TEST(CostModel, ElementwisePassesCountNormsAndTheActivation) {
  CostModel dense = Llama8B();
  CostModel::Step s;
  for (int i = 0; i < 100; ++i) dense.Add(s, 50, 1, true);
  EXPECT_NEAR(dense.ElementwiseSeconds(s), 100.0 * 32 * (16 * 4096 + 6 * 14336) / H100Bandwidth(), 1e-12);
  EXPECT_NEAR(dense.Explain(s).elementwise, dense.ElementwiseSeconds(s), 1e-15);

  DeployedModel d;
  d.model = *LoadModel("qwen3-30b-a3b");  // 48 MoE layers, hidden 2,048, 8 of 128 experts of 768
  d.params = CountParams(d.model);
  d.weight_bytes = d.params.total();
  d.tensor_parallel = 2;
  auto f = FactorsFor(*FindGpu("h100-sxm"), "fp8");
  ASSERT_TRUE(f.ok());
  const double per_token = 48.0 * (16 * 2048 + 6.0 * 8 * 768 / 2);
  CostModel::Step moe_step;
  const CostModel moe(d, *f);
  for (int i = 0; i < 10; ++i) moe.Add(moe_step, 0, 64, true);
  EXPECT_NEAR(moe.ElementwiseSeconds(moe_step), 640 * per_token / H100Bandwidth(), 1e-12);
  d.data_parallel = 2;
  EXPECT_NEAR(CostModel(d, *f).ElementwiseSeconds(moe_step), 320 * per_token / H100Bandwidth(), 1e-12);

  // One norm a layer and a layer without an MLP (Nemotron-H's blocks): 8 x
  // hidden per norm, no activation pass where there is no FFN.
  DeployedModel blocks;
  blocks.model = *LoadModel("llama-3.1-8b");
  blocks.model.norms_per_layer = 1;
  blocks.model.layers[0].mlp = MlpKind::kNone;
  blocks.params = CountParams(blocks.model);
  blocks.weight_bytes = blocks.params.total() * 2;
  const CostModel one_norm(blocks, *FactorsFor(*FindGpu("h100-sxm"), "bf16"));
  EXPECT_NEAR(one_norm.ElementwiseSeconds(s), 100.0 * (32 * 8 * 4096 + 31 * 6 * 14336) / H100Bandwidth(), 1e-12);
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
  EXPECT_LT(step(32) / step(1), 1.10);          // 32x the tokens for < 10% more time
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
  const double bw = H100Bandwidth();
  EXPECT_NEAR(m.MemorySeconds(one) * bw, 3e9 + 57e9 * 4.0 / 128, 1e6);
  EXPECT_GT(m.MemorySeconds(many) * bw, 59.9e9);
}

TEST(CostModel, PrecisionPicksItsEfficiency) {
  HardwareSpec card = *FindGpu("h100-sxm");
  card.compute_efficiency = 0.6;
  card.compute_efficiency_by_precision = {{"mxfp4", 0.3}};
  EXPECT_DOUBLE_EQ(FactorsFor(card, "mxfp4")->compute_efficiency, 0.3);
  EXPECT_DOUBLE_EQ(FactorsFor(card, "bf16")->compute_efficiency, 0.6);
}

// Attention multiplies activations by KV in 16-bit whatever the weights are:
// its rate is the card's 16-bit one, expressed against the format's peak.
TEST(CostModel, AttentionRunsAtTheSixteenBitRate) {
  HardwareSpec card = *FindGpu("h100-sxm");
  card.compute_efficiency = 0.6;
  card.compute_efficiency_by_precision = {{"mxfp4", 0.3}};
  card.attention_efficiency_by_precision.clear();
  const CostFactors mxfp4 = *FactorsFor(card, "mxfp4");
  EXPECT_DOUBLE_EQ(mxfp4.EfficiencyAt(4096), 0.3);
  EXPECT_DOUBLE_EQ(mxfp4.AttentionEfficiencyAt(1), 0.6);
  EXPECT_DOUBLE_EQ(mxfp4.AttentionEfficiencyAt(4096), 0.6);
  // FP8 doubles the matmul peak, not attention's: half the FP8 peak's rate.
  const CostFactors fp8 = *FactorsFor(card, "fp8");
  EXPECT_DOUBLE_EQ(fp8.peak_flops * fp8.AttentionEfficiencyAt(1), 0.6 * *card.bf16_flops);
  card.attention_efficiency_by_precision = {{"mxfp4", 0.15}};
  EXPECT_DOUBLE_EQ(FactorsFor(card, "mxfp4")->AttentionEfficiencyAt(1), 0.15);
  EXPECT_DOUBLE_EQ(FactorsFor(card, "bf16")->AttentionEfficiencyAt(1), 0.6);
}

TEST(CostModel, PrecisionPicksTheTensorCorePeak) {
  auto b200 = *FindGpu("b200");
  EXPECT_DOUBLE_EQ(FactorsFor(b200, "bf16")->peak_flops, 2.25e15);
  EXPECT_DOUBLE_EQ(FactorsFor(b200, "fp8")->peak_flops, 4.5e15);
  EXPECT_DOUBLE_EQ(FactorsFor(b200, "nvfp4")->peak_flops, 9.0e15);
  EXPECT_DOUBLE_EQ(FactorsFor(b200, "int4")->peak_flops, 2.25e15);  // weight-only: BF16 math
  EXPECT_DOUBLE_EQ(FactorsFor(*FindGpu("a100"), "fp8")->peak_flops, 312e12);  // no FP8 cores
}

// The B200's matmul rates are the GEMMs measured on one (vLLM's kernel
// benchmarks, Llama-3.1-8B's 6144x4096 projection at 16,384 tokens, the kernel
// alone: NVFP4 3,904 TFLOP/s, FP8 2,545, BF16 1,360), within 10%: FP4 runs
// about 1.5x FP8, not the datasheet's 2x; attention stays at the 16-bit rate.
TEST(CostModel, B200MatmulRatesAreTheMeasuredGemms) {
  auto b200 = *FindGpu("b200");
  const auto achieved = [&](const char* format) {
    const CostFactors f = *FactorsFor(b200, format);
    return f.peak_flops * f.compute_efficiency;
  };
  EXPECT_NEAR(achieved("nvfp4") / 3904e12, 1.0, 0.1);
  EXPECT_NEAR(achieved("fp8") / 2545e12, 1.0, 0.1);
  EXPECT_NEAR(achieved("bf16") / 1360e12, 1.0, 0.1);
  const CostFactors nvfp4 = *FactorsFor(b200, "nvfp4");
  EXPECT_NEAR(nvfp4.peak_flops * nvfp4.AttentionEfficiencyAt(1), 0.6 * *b200.bf16_flops, 1e9);
}

// The LM head stays in the model's 16-bit dtype in quantized checkpoints (the
// planner counts its bytes so), so its matmul runs at the card's 16-bit rate
// whatever the weights' format: on a B200 under NVFP4, 2.25 PFLOP/s x 0.6, not
// the NVFP4 GEMM's 9 x 0.43. By hand, 1,000 sampled tokens of Llama-3.1-8B's
// 128,256 x 4,096 head: 2 x 525,336,576 x 1,000 / 1.35e15 = 0.778 ms.
TEST(CostModel, LmHeadRunsAtTheSixteenBitRate) {
  const HardwareSpec b200 = *FindGpu("b200");
  const CostFactors fp4 = *FactorsFor(b200, "nvfp4");
  EXPECT_NEAR(fp4.peak_flops * fp4.compute_efficiency * fp4.head_rate, 2.25e15 * 0.6, 1e6);
  EXPECT_DOUBLE_EQ(FactorsFor(b200, "bf16")->head_rate, 1.0);
  DeployedModel d;
  d.model = *LoadModel("llama-3.1-8b");
  d.params = CountParams(d.model);
  const CostModel m(d, fp4);
  CostModel::Step sampled, not_sampled;
  for (int i = 0; i < 1000; ++i) {
    m.Add(sampled, 100, 1, true);
    m.Add(not_sampled, 100, 1, false);
  }
  EXPECT_NEAR(m.MatmulSeconds(sampled) - m.MatmulSeconds(not_sampled), 2.0 * 525'336'576 * 1000 / 1.35e15, 1e-9);
}

// Factors fitted with one weight format, carried to another through the
// card's entry: fitted to the entry's own BF16 factors, the FP8 and MXFP4
// factors give the rates the entry gives those formats directly (matmul at
// the format's peak and efficiency, attention at the 16-bit rate), and a
// fitted deviation (a bandwidth and matmul efficiency of the engine's own)
// carries over in proportion.
TEST(CostModel, FittedFactorsCarryToAnotherWeightFormat) {
  HardwareSpec card = *FindGpu("h100-sxm");
  card.compute_efficiency = 0.6;
  card.compute_efficiency_by_precision = {{"mxfp4", 0.3}};
  card.attention_efficiency_by_precision = {{"mxfp4", 0.15}};
  const CostFactors bf16 = *FactorsFor(card, "bf16");
  for (const char* format : {"fp8", "mxfp4"}) {
    const CostFactors direct = *FactorsFor(card, format);
    const CostFactors carried = *FactorsForWeights(bf16, card, "bf16", format);
    EXPECT_DOUBLE_EQ(carried.peak_flops, direct.peak_flops) << format;
    EXPECT_DOUBLE_EQ(carried.EfficiencyAt(4096), direct.EfficiencyAt(4096)) << format;
    EXPECT_DOUBLE_EQ(carried.AttentionEfficiencyAt(1), direct.AttentionEfficiencyAt(1)) << format;
    EXPECT_DOUBLE_EQ(carried.expert_efficiency, direct.expert_efficiency) << format;
    EXPECT_NEAR(carried.peak_flops * carried.EfficiencyAt(64) * carried.head_rate,
                direct.peak_flops * direct.EfficiencyAt(64) * direct.head_rate, 1e3)
        << format << ": the head at the card's 16-bit rate either way";
    const CostFactors back = *FactorsForWeights(carried, card, format, "bf16");
    EXPECT_DOUBLE_EQ(back.peak_flops * back.EfficiencyAt(64), bf16.peak_flops * bf16.EfficiencyAt(64)) << format;
    EXPECT_DOUBLE_EQ(back.peak_flops * back.AttentionEfficiencyAt(64), bf16.peak_flops * bf16.compute_efficiency)
        << format;
    EXPECT_EQ(back.expert_efficiency, 0) << format;
  }
  EXPECT_GT(FactorsForWeights(bf16, card, "bf16", "fp8")->expert_efficiency, 0);  // the entry's FP8 MoE kernel
  CostFactors fitted = bf16;
  fitted.compute_efficiency = 0.45;
  fitted.bandwidth_efficiency = 0.7;
  const CostFactors fp8 = *FactorsForWeights(fitted, card, "bf16", "fp8");
  EXPECT_NEAR(fp8.peak_flops * fp8.EfficiencyAt(8) / (0.45 * *card.fp8_flops), 1, 1e-12);
  EXPECT_DOUBLE_EQ(fp8.peak_flops * fp8.AttentionEfficiencyAt(8), 0.45 * *card.bf16_flops);
  EXPECT_DOUBLE_EQ(fp8.bandwidth_efficiency, 0.7);
  EXPECT_EQ(FactorsForWeights(fitted, card, "bf16", "bf16")->attention_curve.size(), 0u)
      << "the same format: as fitted";
  HardwareSpec no_peak = card;
  no_peak.bf16_flops.reset();
  EXPECT_FALSE(FactorsForWeights(fitted, no_peak, "bf16", "fp8").ok());
}

// DeepGEMM's published FP8 GEMM timings on H800 (the H100's tensor cores and
// HBM; deepseek-ai/DeepGEMM README, February 2025): M, N, K (M rows per
// group), groups, TFLOP/s. The roofline with the H100 entry's factors (FP8
// peak x the default 0.6 efficiency; Azure's measured 0.89 of the bandwidth)
// and the catalog's overlap times them within 10% (median |log error|), as
// many fast as slow; the plain roofline (overlap 1) is fast on most of them,
// most in the 64-512 rows between memory- and compute-bound.
TEST(CostModel, OverlapMatchesDeepGemmsPublishedTimings) {
  struct Gemm {
    double m, n, k, groups, tflops;
  };
  const std::vector<Gemm> published = {
      {64, 2112, 7168, 1, 206},     {64, 24576, 1536, 1, 289},   {64, 32768, 512, 1, 219},
      {64, 7168, 16384, 1, 336},    {64, 4096, 7168, 1, 287},    {64, 7168, 2048, 1, 295},
      {128, 2112, 7168, 1, 352},    {128, 24576, 1536, 1, 535},  {128, 32768, 512, 1, 358},
      {128, 7168, 16384, 1, 645},   {128, 4096, 7168, 1, 533},   {128, 7168, 2048, 1, 510},
      {4096, 2112, 7168, 1, 1058},  {4096, 24576, 1536, 1, 990}, {4096, 32768, 512, 1, 590},
      {4096, 7168, 16384, 1, 1358}, {4096, 4096, 7168, 1, 1304}, {4096, 7168, 2048, 1, 1025},
      {8192, 4096, 7168, 4, 1297},  {8192, 7168, 2048, 4, 1099}, {4096, 4096, 7168, 8, 1288},
      {4096, 7168, 2048, 8, 1093},  {1024, 4096, 7168, 1, 1233}, {1024, 7168, 2048, 1, 925},
      {512, 4096, 7168, 2, 1040},   {512, 7168, 2048, 2, 916},   {256, 4096, 7168, 4, 932},
      {256, 7168, 2048, 4, 815}};
  const HardwareSpec h100 = *FindGpu("h100-sxm");
  const auto f = *FactorsFor(h100, "fp8");
  const auto errors = [&](double overlap) {
    std::vector<double> e;
    for (const Gemm& g : published) {
      const double flops = 2 * g.groups * g.m * g.n * g.k;
      const double bytes = g.groups * (g.m * g.k + g.n * g.k + 2 * g.m * g.n);  // FP8 in, BF16 out
      const double model = RooflineSeconds(flops / (f.peak_flops * f.compute_efficiency),
                                           bytes / (f.bandwidth * f.bandwidth_efficiency), overlap);
      e.push_back(std::log(model / (flops / (g.tflops * 1e12))));
    }
    return e;
  };
  const auto median_abs = [](std::vector<double> e) {
    for (double& x : e) x = std::abs(x);
    std::sort(e.begin(), e.end());
    return e[e.size() / 2];
  };
  const auto fast_share = [](const std::vector<double>& e) {
    return static_cast<double>(std::count_if(e.begin(), e.end(), [](double x) { return x < 0; })) / e.size();
  };
  const std::vector<double> catalog = errors(h100.overlap);
  EXPECT_LT(median_abs(catalog), 0.10);
  EXPECT_GE(fast_share(catalog), 0.35);
  EXPECT_LE(fast_share(catalog), 0.65);
  const std::vector<double> plain = errors(1.0);
  EXPECT_GT(median_abs(plain), 0.15);
  EXPECT_GT(fast_share(plain), 0.75);
}

// Llama-3.1-8B in bf16 with a drafter of 0.8B parameters (1.6 GB).
DeployedModel LlamaWithDrafter(int draft_layers) {
  DeployedModel d;
  d.model = *LoadModel("llama-3.1-8b");
  d.params = CountParams(d.model);
  d.weight_bytes = d.params.total() * 2;
  d.draft_params = 800'000'000;
  d.draft_weight_bytes = 1'600'000'000;
  d.draft_layers = draft_layers;
  return d;
}

// A drafter runs once per draft token: three passes of one EAGLE layer plus
// the LM head over the drafting requests (memory-bound at batch 8: its
// weights read three times).
TEST(CostModel, DrafterPassesAddTheirOwnCost) {
  CostModel m(LlamaWithDrafter(0), *FactorsFor(*FindGpu("h100-sxm"), "bf16"));
  CostModel::Step plain, drafting;
  for (int i = 0; i < 8; ++i) {
    m.Add(plain, 100, 4, true);
    m.Add(drafting, 100, 4, true, 3);
  }
  EXPECT_NEAR(m.DraftSeconds(drafting), 3 * 1.6e9 / H100Bandwidth(), 1e-12);
  EXPECT_NEAR(m.Seconds(drafting) - m.Seconds(plain), m.DraftSeconds(drafting), 1e-12);
}

// Each draft pass launches its own kernels: one EAGLE layer shaped like
// Llama's (10), the fc joining embedding and hidden state with the two norms
// before it (3), then the LM head and sampling (4).
TEST(CostModel, DrafterPassesLaunchTheirKernels) {
  const DeployedModel d = LlamaWithDrafter(1);
  CostFactors f = *FactorsFor(*FindGpu("h100-sxm"), "bf16");
  f.kernel_latency_s = 0;
  CostModel none(d, f);
  f.kernel_latency_s = 4e-6;
  CostModel some(d, f);
  CostModel::Step s;
  for (int i = 0; i < 8; ++i) some.Add(s, 100, 1, true, 3);
  EXPECT_NEAR(some.DraftSeconds(s) - none.DraftSeconds(s), 3 * 17 * 4e-6, 1e-12);
  EXPECT_NEAR(some.Seconds(s) - none.Seconds(s), (325 + 3 * 17) * 4e-6, 1e-12);
}

// Under tensor parallelism a drafter's layer all-reduces its activations
// twice, as the target's layers do: by hand, three passes of one layer at
// TP 4 over a 15 us link carrying 8 tokens of 4,096 bf16 activations at
// 450 GB/s: 3 x 2 x (15 us + 2 x 3/4 x 8 x 8,192 B / 450 GB/s).
TEST(CostModel, DrafterLayersAllReduceUnderTensorParallelism) {
  DeployedModel d = LlamaWithDrafter(1);
  CostFactors f = *FactorsFor(*FindGpu("h100-sxm"), "bf16");
  f.kernel_latency_s = 0;
  f.link_latency_s = 15e-6;
  f.link_bandwidth = 450e9;
  const CostModel one(d, f);
  d.tensor_parallel = 4;
  const CostModel four(d, f);
  CostModel::Step s1, s4;
  for (int i = 0; i < 8; ++i) {
    one.Add(s1, 100, 1, true, 3);
    four.Add(s4, 100, 1, true, 3);
  }
  const double reduce = 15e-6 + 2.0 * 3 / 4 * 8 * 4096 * 2 / 450e9;
  EXPECT_NEAR(four.DraftSeconds(s4) - one.DraftSeconds(s1), 3 * 2 * reduce, 1e-12);
}

// MLA attends in two forms (DeepSeek-V3 at TP 8: 16 heads per GPU, latent
// rank 512, rope 64, nope 128, v 128, 61 layers), by hand: a decode as an
// MQA over the latent, 2 x 16 x (2 x 512 + 64) FLOPs per query-key pair per
// layer; a prefill per head, 2 x 16 x (128 + 64 + 128), after expanding each
// cached latent token to K and V, 2 x 16 x 512 x (128 + 128).
TEST(CostModel, MlaDecodesAbsorbedAndPrefillsExpanded) {
  DeployedModel d;
  d.model = *LoadModel("deepseek-v3");
  d.params = CountParams(d.model);
  d.weight_bytes = 1;
  d.tensor_parallel = 8;
  CostFactors f;
  f.peak_flops = 1e15;
  f.compute_efficiency = 1;
  f.bandwidth = 1e12;
  CostModel m(d, f);
  CostModel::Step decode, prefill;
  m.Add(decode, 999, 1, true);
  EXPECT_NEAR(m.AttentionSeconds(decode), 1000.0 * 2 * 16 * 1088 * 61 / 1e15, 1e-15);
  m.Add(prefill, 200, 100, true);
  const double pairs = 100.0 * 200 + 100.0 * 101 / 2;
  const double expected = (pairs * 2 * 16 * 320 + 200.0 * 2 * 16 * 512 * 256) * 61 / 1e15;
  EXPECT_NEAR(m.AttentionSeconds(prefill), expected, 1e-15);
}

// Per-request host cost, the overlap of compute and memory, and async
// scheduling's overlap of host and GPU (a step takes the longer), by hand.
TEST(CostModel, PerRequestCostAndOverlap) {
  DeployedModel d;
  d.model = *LoadModel("goodput-small");
  d.params = CountParams(d.model);
  d.weight_bytes = 400'000'000;
  CostFactors f;
  f.peak_flops = 1e11;
  f.compute_efficiency = 1;
  f.bandwidth = 4e10;
  f.bandwidth_efficiency = 1;
  f.step_overhead_s = 0;
  f.per_sequence_s = 1e-4;
  f.overlap = 1;
  CostModel full(d, f);
  f.overlap = 0;
  CostModel none(d, f);
  CostModel::Step s;
  for (int i = 0; i < 10; ++i) full.Add(s, 0, 1, true);
  const double mm = full.MatmulSeconds(s), w = full.WeightSeconds(s), at = full.AttentionSeconds(s),
               kv = full.KvSeconds(s), el = full.ElementwiseSeconds(s);  // el: separate kernels, not overlapped
  EXPECT_GT(el, 0);
  EXPECT_NEAR(full.Seconds(s), 10 * 1e-4 + std::max(mm, w) + std::max(at, kv) + el, 1e-12);
  EXPECT_NEAR(none.Seconds(s), 10 * 1e-4 + mm + w + at + kv + el, 1e-12);
  f.overlap = 1;
  f.async_scheduling = true;
  const CostModel async(d, f);
  const double gpu = std::max(mm, w) + std::max(at, kv) + el;
  EXPECT_GT(gpu, 10 * 1e-4);  // GPU-bound: the host's 1 ms hides
  EXPECT_NEAR(async.Seconds(s), gpu, 1e-12);
  f.per_sequence_s = 0.1;  // host-bound: 1 s of host work hides the GPU's
  EXPECT_NEAR(CostModel(d, f).Seconds(s), 10 * 0.1, 1e-12);
  f.async_scheduling = false;
  EXPECT_NEAR(CostModel(d, f).Seconds(s), 10 * 0.1 + gpu, 1e-12);
}

// A prompt step an engine runs without CUDA graphs waits on its launches
// where they take longer than its GPU work, by hand: Llama-3.1-8B's 325
// kernels (kernel_count_test.cc) at 100 us each, 32.5 ms, over a 64-token
// prompt's few milliseconds; a prompt of 8,192 tokens outlasts them, and
// decodes replay their graphs whatever the launch cost.
TEST(CostModel, EagerPromptStepsWaitOnTheirLaunches) {
  const CostModel graphs = Llama8B();
  CostFactors f = graphs.factors();
  f.eager_kernel_s = 100e-6;
  const CostModel eager(graphs.model(), f);
  CostModel::Step short_prompt, long_prompt, decodes;
  graphs.Add(short_prompt, 0, 64, true);
  graphs.Add(long_prompt, 0, 8192, true);
  for (int i = 0; i < 8; ++i) graphs.Add(decodes, 100, 1, true);
  EXPECT_EQ(short_prompt.prompts, 1);
  EXPECT_EQ(decodes.prompts, 0);
  ASSERT_LT(graphs.Explain(short_prompt).gpu, 325 * 100e-6);
  EXPECT_NEAR(eager.Explain(short_prompt).launches, 325 * 100e-6, 1e-12);
  EXPECT_NEAR(eager.Explain(short_prompt).gpu, 325 * 100e-6, 1e-12);
  EXPECT_NEAR(eager.Seconds(short_prompt), f.step_overhead_s + 325 * 100e-6, 1e-12);
  ASSERT_GT(graphs.Explain(long_prompt).gpu, 325 * 100e-6);
  EXPECT_DOUBLE_EQ(eager.Seconds(long_prompt), graphs.Seconds(long_prompt));
  EXPECT_EQ(eager.Explain(decodes).launches, 0);
  EXPECT_DOUBLE_EQ(eager.Seconds(decodes), graphs.Seconds(decodes));
  // A step with one chunk among its decodes is a prompt step.
  graphs.Add(decodes, 0, 64, true);
  EXPECT_GE(eager.Seconds(decodes), 325 * 100e-6);
  f.eager_kernel_s = -1e-6;
  EXPECT_FALSE(CheckFactors(f, "x").ok());
}

// A decode step of more requests than the engine's CUDA graphs hold runs
// eagerly (SGLang's --cuda-graph-max-bs): 9 decodes over a bound of 8 wait on
// the 325 launches, 8 replay their graph.
TEST(CostModel, DecodeStepsBeyondTheGraphsRunEagerly) {
  CostFactors f = Llama8B().factors();
  f.eager_kernel_s = 100e-6;
  f.graph_max_batch = 8;
  const CostModel capped(Llama8B().model(), f);
  CostModel::Step eight, nine;
  for (int i = 0; i < 8; ++i) capped.Add(eight, 100, 1, true);
  for (int i = 0; i < 9; ++i) capped.Add(nine, 100, 1, true);
  EXPECT_EQ(capped.Explain(eight).launches, 0);
  EXPECT_NEAR(capped.Explain(nine).launches, 325 * 100e-6, 1e-12);
  EXPECT_NEAR(capped.Explain(nine).gpu, 325 * 100e-6, 1e-12);  // launch-bound: its GPU work is shorter
  f.graph_max_batch = 0;                                       // no bound: every decode step replays a graph
  EXPECT_EQ(CostModel(Llama8B().model(), f).Explain(nine).launches, 0);
  f.graph_max_batch = -1;
  EXPECT_FALSE(CheckFactors(f, "x").ok());
}

// Efficiency curves are interpolated in log(tokens) and constant beyond.
TEST(CostFactors, CurvesInterpolateInLogTokens) {
  CostFactors f;
  f.efficiency_curve = {{1, 0.1}, {100, 0.5}};
  EXPECT_DOUBLE_EQ(f.EfficiencyAt(0.5), 0.1);
  EXPECT_DOUBLE_EQ(f.EfficiencyAt(10), 0.3);  // halfway in log
  EXPECT_DOUBLE_EQ(f.EfficiencyAt(1000), 0.5);
  EXPECT_DOUBLE_EQ(f.AttentionEfficiencyAt(5), f.compute_efficiency);  // no attention curve
}

}  // namespace
}  // namespace goodput
