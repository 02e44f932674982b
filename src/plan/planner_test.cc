#include "plan/planner.h"

#include <cmath>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "core/units.h"
#include "hw/hardware.h"
#include "model/catalog.h"
#include "plan/deployment.h"
#include "plan/plan_testing.h"

namespace goodput {
namespace {

constexpr int64_t kGiB = int64_t{1} << 30;

int64_t GiB(double g) { return static_cast<int64_t>(g * kGiB); }

ModelSpec Model(const std::string& name) { return *LoadModel(name); }

// The published vLLM figures for Llama-3.1-8B on one H100 (79.18 GiB),
// utilization 0.9, with weights 14.99 GiB, activation peak 4.76 GiB and
// non-torch 0.13 GiB as measured inputs: "Available KV cache memory: 51.38 GiB",
// 420,864 tokens at 131,072 B/token. The inputs are rounded to 0.01 GiB, so
// the pool is known to +-0.02 GiB, i.e. +-10 blocks of 2 MiB.
TEST(Planner, Llama8BOnH100MatchesTheVllmLog) {
  PlanOptions o = OnGpu("h100-sxm");
  o.weights_memory = GiB(14.99);
  o.activation_memory = GiB(4.76);
  o.non_torch_memory = GiB(0.13);
  auto p = MakePlan(Model("llama-3.1-8b"), o);
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ(FormatGiB(p->kv_pool), "51.38 GiB");
  EXPECT_NEAR(static_cast<double>(p->capacity.num_blocks), 26304, 10);
  EXPECT_NEAR(static_cast<double>(p->capacity.tokens_per_group), 420864, 10 * 16);
  EXPECT_TRUE(p->startup_error.empty());
  EXPECT_EQ(p->options.engine.scheduler.max_num_batched_tokens, 8192);
  EXPECT_EQ(p->options.engine.scheduler.max_num_seqs, 1024);
  ASSERT_EQ(p->kinds.size(), 1u);
  EXPECT_EQ(p->kinds[0].bytes_per_token * p->kinds[0].layers, 131072);
  EXPECT_DOUBLE_EQ(p->kinds[0].share, 1.0);
}

// vLLM's own --kv-cache-memory suggestion, against a published start-up log
// (validation receipts of a Qwen3.8-27B serving config, vLLM dev 4d2a68d):
// "Free memory on device (79.99/80.0 GiB) ... (0.92, 73.6 GiB). Actual usage
// is 51.66 GiB for consumed memory (weights + non-torch), 2.4 GiB for peak
// activation, and 0.71 GiB for CUDAGraph memory. Replace gpu_memory_utilization
// config with `--kv-cache-memory=20064085607` (18.69 GiB) to fit into requested
// memory, or `--kv-cache-memory=26927570944` (25.08 GiB) to fully utilize gpu
// memory. Current kv cache memory in use is 19.54 GiB." The figures are
// rounded to 0.01 GiB (and the plan takes the free memory as the whole 80),
// so each is known to about 0.02 GiB. Pinned, vLLM suggests nothing.
TEST(Planner, VllmsKvCacheMemorySuggestionMatchesAPublishedLog) {
  PlanOptions o;
  o.total_memory = GiB(80);
  o.gpu_memory_utilization = 0.92;
  o.weights_memory = GiB(51.65);
  o.non_torch_memory = GiB(0.01);
  o.activation_memory = GiB(2.4);
  o.cuda_graph_memory = GiB(0.71);
  auto p = MakePlan(Model("llama-3.1-8b"), o);
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_NEAR(ToGiB(p->kv_pool), 19.54, 0.02);
  ASSERT_TRUE(p->suggest_requested.has_value());
  EXPECT_NEAR(ToGiB(*p->suggest_requested), ToGiB(20064085607), 0.02);
  EXPECT_NEAR(ToGiB(*p->suggest_full), ToGiB(26927570944), 0.02);
  EXPECT_EQ(*p->suggest_full - *p->suggest_requested, p->total - p->requested);  // the same 150 MiB off both
  o.engine.cache.kv_cache_memory = GiB(18);
  auto pinned = MakePlan(Model("llama-3.1-8b"), o);
  ASSERT_TRUE(pinned.ok());
  EXPECT_FALSE(pinned->suggest_full.has_value());
}

// The estimates land near what vLLM measured for the same run: weights
// 14.99 GiB ("Model loading took 14.99 GiB"), activation peak 4.76 GiB.
TEST(Planner, EstimatesAreCloseToTheMeasuredRun) {
  auto p = MakePlan(Model("llama-3.1-8b"), OnGpu("h100-sxm"));
  ASSERT_TRUE(p.ok());
  EXPECT_FALSE(p->weights.measured);
  EXPECT_NEAR(ToGiB(p->weights.bytes), 14.99, 0.05);
  EXPECT_NEAR(ToGiB(p->activation.bytes), 4.76, 0.05);
}

// Start-ups the activation constant was not fitted to, from the same table
// (llm-d/llm-d-benchmark, config_explorer/empirical-vllm-memory-results.md:
// vLLM 0.11 on one H100 per GPU, utilization 0.9, --max-model-len 16000
// --block-size 128): "torch peak memory increase" and "Available KV cache
// memory", planned from estimates alone. Llama-3.3-70B shares Llama-3.1-70B's
// shape. gpt-oss-20b's pool is left out: vLLM loaded its MXFP4 weights at 13.47
// GiB, 0.66 GiB above the checkpoint's bytes the plan counts.
TEST(Planner, EstimatesMatchPublishedStartupsHeldOut) {
  struct Case {
    const char* model;
    const char* weights;
    int tp;
    double activation, kv_pool;
  };
  for (const Case& c : {Case{"qwen3-32b", "auto", 1, 5.64, 4.45}, Case{"qwen3-32b", "auto", 2, 5.64, 34.49},
                        Case{"llama-3.1-70b", "fp8", 2, 4.84, 32.00}, Case{"gpt-oss-20b", "auto", 1, 7.38, -1}}) {
    SCOPED_TRACE(std::string(c.model) + " tp " + std::to_string(c.tp));
    PlanOptions o = OnGpu("h100-sxm");
    o.weights = c.weights;
    o.tensor_parallel = c.tp;
    o.engine.scheduler.max_model_len = 16000;
    o.engine.cache.block_size = 128;
    auto p = MakePlan(Model(c.model), o);
    ASSERT_TRUE(p.ok()) << p.status().message();
    EXPECT_NEAR(ToGiB(p->activation.bytes), c.activation, 0.01 * c.activation);
    if (c.kv_pool > 0) {
      EXPECT_NEAR(ToGiB(p->kv_pool), c.kv_pool, 0.1);
    }
  }
  // vLLM 0.10.1 with the Marlin MoE kernel on one H100, its defaults
  // (vllm-project/vllm#23278): "Available KV cache memory: -2.14 GiB".
  PlanOptions o = OnGpu("h100-sxm");
  o.mxfp4_moe_backend = "marlin";
  auto marlin = MakePlan(Model("gpt-oss-120b"), o);
  ASSERT_TRUE(marlin.ok()) << marlin.status().message();
  EXPECT_NEAR(ToGiB(marlin->kv_pool), -2.14, 0.1);
  EXPECT_FALSE(marlin->startup_error.empty());
}

// Source document 003: raising max_num_seqs from 8 to 32 moved the KV memory
// of Qwen3.5-27B on one B200 by 0.03%. Its profiling peak is the forward's
// over the token budget at both (the sampler's for 32 sequences is smaller),
// so the pool does not move; counted as a sum of the two it moved 0.13%.
TEST(Planner, MaxNumSeqsBarelyMovesTheSourcesPool) {
  PlanOptions o = OnGpu("b200");
  o.weights = "int4";
  o.engine.scheduler.max_model_len = 1 << 20;
  const auto pool = [&](int64_t seqs) {
    o.engine.scheduler.max_num_seqs = seqs;
    auto p = MakePlan(Model("qwen3.5-27b"), o);
    EXPECT_TRUE(p.ok());
    return static_cast<double>(p->kv_pool);
  };
  EXPECT_LE(std::abs(pool(32) / pool(8) - 1), 0.0003);
  EXPECT_LT(pool(1024), pool(32));  // a thousand sequences' logits outgrow the forward
}

// Halving the KV format of the long-context hybrid doubles what fits: the
// block size doubles (784 -> 1568 tokens) while the page stays the same.
TEST(Planner, Fp8KvDoublesLongRequestsThatFit) {
  PlanOptions o = OnGpu("b200");
  o.weights = "int4";
  o.engine.scheduler.max_model_len = 1 << 20;
  auto bf16 = MakePlan(Model("qwen3.5-27b"), o);
  o.engine.cache.kv_cache_dtype = "fp8";
  auto fp8 = MakePlan(Model("qwen3.5-27b"), o);
  ASSERT_TRUE(bf16.ok() && fp8.ok());
  EXPECT_EQ(bf16->layout.attention_block_size, 784);
  EXPECT_EQ(fp8->layout.attention_block_size, 1568);
  EXPECT_EQ(bf16->capacity.num_blocks, fp8->capacity.num_blocks);
  const double ratio = fp8->capacity.max_concurrency / bf16->capacity.max_concurrency;
  EXPECT_GT(ratio, 1.95);
  EXPECT_LT(ratio, 2.05);
  // The source's split: the 16 growing layers hold nearly all of a long request's memory.
  double attention_share = 0;
  for (const auto& k : bf16->kinds) {
    if (k.kind == LayerKind::kFullAttention) attention_share = k.share;
  }
  EXPECT_GT(attention_share, 0.995);
}

// A fixed length: every request holds exactly 8000 / 16 = 500 blocks, so the
// pool holds num_blocks / 500 of them, with no spread to be conservative about.
TEST(Planner, FixedLengthConcurrencyByHand) {
  PlanOptions o = OnGpu("h100-sxm");
  o.lengths = *LengthDistribution::FromSpec("fixed:8k");
  auto p = MakePlan(Model("llama-3.1-8b"), o);
  ASSERT_TRUE(p.ok());
  ASSERT_TRUE(p->lengths.has_value());
  EXPECT_DOUBLE_EQ(p->lengths->mean_blocks, 500.0);
  EXPECT_DOUBLE_EQ(p->lengths->sd_blocks, 0.0);
  EXPECT_DOUBLE_EQ(p->lengths->max_concurrent_mean, p->capacity.num_blocks / 500.0);
  EXPECT_EQ(p->lengths->conservative, p->capacity.num_blocks / 500);
  EXPECT_TRUE(p->lengths->kv_binds == (p->lengths->conservative < 1024));
}

TEST(Planner, SpreadMakesTheConservativeValueSmaller) {
  PlanOptions o = OnGpu("h100-sxm");
  o.lengths = *LengthDistribution::FromSpec("0-4k:0.9,4k-64k:0.1");
  auto p = MakePlan(Model("llama-3.1-8b"), o);
  ASSERT_TRUE(p.ok());
  EXPECT_GT(p->lengths->sd_blocks, 0);
  EXPECT_LT(p->lengths->conservative, p->lengths->max_concurrent_mean);
  // n = conservative satisfies n*mean + z*sqrt(n)*sd <= N (z = 2.326 at 99%), and n + 1 does not.
  const double z = 2.3263478740408408, mu = p->lengths->mean_blocks, sd = p->lengths->sd_blocks;
  const double n_blocks = static_cast<double>(p->capacity.num_blocks);
  const auto demand = [&](double n) { return n * mu + z * std::sqrt(n) * sd; };
  EXPECT_LE(demand(static_cast<double>(p->lengths->conservative)), n_blocks);
  EXPECT_GT(demand(static_cast<double>(p->lengths->conservative + 1)), n_blocks);
}

TEST(Planner, ModelThatDoesNotFitSaysWhy) {
  auto p = MakePlan(Model("llama-3.1-70b"), OnGpu("l40s"));
  ASSERT_TRUE(p.ok());
  EXPECT_NE(p->startup_error.find("No available memory"), std::string::npos);
}

// A full-attention model fits L tokens when ceil(L / 16) <= num_blocks, so the
// estimated maximum length is exactly 16 * num_blocks.
TEST(Planner, MaxLengthTooLongEstimatesWhatFits) {
  PlanOptions o;
  o.gpu = "custom";
  o.total_memory = 24 * kGiB;
  auto p = MakePlan(Model("llama-3.1-8b"), o);
  ASSERT_TRUE(p.ok());
  EXPECT_NE(p->startup_error.find("To serve at least one request"), std::string::npos);
  EXPECT_EQ(p->estimated_max_model_len, 16 * p->capacity.num_blocks);
}

TEST(Planner, MarginWarningWhenHeadroomCannotHoldCudaGraphs) {
  auto has_margin_warning = [](const Plan& p) {
    for (const auto& w : p.warnings) {
      if (w.rfind("margin:", 0) == 0) return true;
    }
    return false;
  };
  PlanOptions o = OnGpu("h100-sxm");
  o.gpu_memory_utilization = 0.98;
  const auto dense = MakePlan(Model("llama-3.1-8b"), o);
  EXPECT_TRUE(has_margin_warning(*dense));
  // A hybrid's warning says why it needs the buffer most; a dense model's does not.
  const auto hybrid_clause = [](const Plan& p) {
    for (const auto& w : p.warnings) {
      if (w.find("profiles without its linear-attention layers") != std::string::npos) return true;
    }
    return false;
  };
  EXPECT_FALSE(hybrid_clause(*dense));
  const auto hybrid = MakePlan(Model("qwen3.5-27b"), o);
  EXPECT_TRUE(has_margin_warning(*hybrid) && hybrid_clause(*hybrid));
  o.gpu_memory_utilization = 0.9;
  EXPECT_FALSE(has_margin_warning(*MakePlan(Model("llama-3.1-8b"), o)));
}

// SGLang sizes its pool as the memory free after loading less (1 - share) of
// the total (model_runner.py, profile_max_num_token: rest_memory =
// available_gpu_memory - total_gpu_memory * (1 - mem_fraction_static)), so
// the pool is share x total - weights - non-torch, the activation peak outside.
TEST(Planner, SglangStaticShareHoldsTheWeightsAndThePoolNotTheActivationPeak) {
  PlanOptions o = OnGpu("h100-sxm");
  o.weights_memory = GiB(14.99);
  o.activation_memory = GiB(4.76);
  o.non_torch_memory = GiB(0.13);
  o.mem_fraction_static = 0.82;
  auto sglang = MakePlan(Model("llama-3.1-8b"), o);
  ASSERT_TRUE(sglang.ok()) << sglang.status().message();
  const auto share = static_cast<int64_t>(std::floor(static_cast<double>(o.total_memory) * 0.82));
  EXPECT_EQ(sglang->kv_pool, share - GiB(14.99) - GiB(0.13));
  EXPECT_EQ(sglang->headroom, o.total_memory - share);
  EXPECT_FALSE(sglang->suggest_requested.has_value());  // vLLM's start-up suggestion is not SGLang's
  o.mem_fraction_static.reset();
  o.gpu_memory_utilization = 0.82;
  auto vllm = MakePlan(Model("llama-3.1-8b"), o);
  ASSERT_TRUE(vllm.ok());
  EXPECT_EQ(sglang->kv_pool - vllm->kv_pool, GiB(4.76));
  // Too small a share names SGLang's flag.
  o.mem_fraction_static = 0.1;
  auto small = MakePlan(Model("llama-3.1-8b"), o);
  ASSERT_TRUE(small.ok());
  EXPECT_NE(small->startup_error.find("weights and non-torch memory take"), std::string::npos);
  EXPECT_NE(small->startup_error.find("Raise --mem-fraction-static"), std::string::npos);
  for (double bad : {0.0, 1.5, std::nan("")}) {
    o.mem_fraction_static = bad;
    EXPECT_FALSE(MakePlan(Model("llama-3.1-8b"), o).ok()) << bad;
  }
  o.mem_fraction_static = 0.8;
  o.engine.cache.kv_cache_memory = GiB(20);
  auto both = MakePlan(Model("llama-3.1-8b"), o);
  ASSERT_FALSE(both.ok());
  EXPECT_NE(both.status().message().find("not both"), std::string::npos);
}

TEST(Planner, TensorParallelDividesWeightsAndChecksHeads) {
  PlanOptions o = OnGpu("h100-sxm");
  auto one = MakePlan(Model("llama-3.1-70b"), o);
  o.tensor_parallel = 4;
  auto four = MakePlan(Model("llama-3.1-70b"), o);
  ASSERT_TRUE(one.ok() && four.ok());
  EXPECT_NEAR(static_cast<double>(four->weights.bytes) * 4, static_cast<double>(one->weights.bytes), 4.0);
  o.tensor_parallel = 3;
  auto bad = MakePlan(Model("llama-3.1-70b"), o);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("not divisible"), std::string::npos);
}

TEST(Planner, BadOptionsAreErrors) {
  PlanOptions o = OnGpu("h100-sxm");
  o.gpu_memory_utilization = 1.5;
  EXPECT_FALSE(MakePlan(Model("llama-3.1-8b"), o).ok());
  o = OnGpu("h100-sxm");
  o.engine.cache.kv_cache_dtype = "fp7";
  EXPECT_FALSE(MakePlan(Model("llama-3.1-8b"), o).ok());
  o = OnGpu("h100-sxm");
  o.weights = "int3";
  EXPECT_FALSE(MakePlan(Model("llama-3.1-8b"), o).ok());
  o = OnGpu("h100-sxm");
  o.total_memory = 0;
  EXPECT_FALSE(MakePlan(Model("llama-3.1-8b"), o).ok());
}

TEST(Weights, PrecisionFamiliesByHand) {
  ModelSpec m = Model("llama-3.1-8b");
  ParamCounts c = CountParams(m);
  auto int4 = ResolveWeightPrecision("int4", m);
  ASSERT_TRUE(int4.ok());
  const int64_t linear = c.mixer_linear + c.dense_mlp;
  const double expected = linear * (0.5 + 2.5 / 128) + (c.embedding + c.lm_head + c.small) * 2.0;
  EXPECT_NEAR(static_cast<double>(WeightBytes(c, *int4, m, 1)), expected, 1.0);
  // gpt-oss's checkpoint quantizes only the experts (mxfp4), keeping attention in bf16.
  ModelSpec oss = Model("gpt-oss-120b");
  auto mx = ResolveWeightPrecision("auto", oss);
  ASSERT_TRUE(mx.ok());
  EXPECT_EQ(mx->name, "mxfp4");
  EXPECT_TRUE(mx->unquantized.attention);
  // About 61 GiB: OpenAI's 120b checkpoint is a 60.8 GiB download.
  EXPECT_NEAR(ToGiB(WeightBytes(CountParams(oss), *mx, oss, 1)), 60.8, 2.0);
  // DeepSeek-V3's checkpoint is fp8 with 128x128 block scales.
  EXPECT_EQ(ResolveWeightPrecision("auto", Model("deepseek-v3"))->name, "fp8-block");
}

// Data-parallel replicas with expert parallelism: DeepSeek-V3 as eight
// one-GPU replicas keeps all its attention, dense layers and embeddings on
// every GPU and an eighth of the routed experts; under TP 8 each GPU holds an
// eighth of everything but what every GPU holds whole (MLA's down-projections,
// the routers). By hand, the difference is 7/8 of the rest. The MLA
// cache is one latent head whatever the split, so a replica's GPU holds the
// latents of its own requests only: the eight replicas hold more tokens in
// all than TP 8, whose GPUs each hold every request's.
TEST(Planner, DataParallelReplicasHoldTheirAttentionWhole) {
  const ModelSpec m = Model("deepseek-v3");
  const ParamCounts c = CountParams(m);
  auto fp8 = ResolveWeightPrecision("auto", m);
  ASSERT_TRUE(fp8.ok());
  const int64_t tp8 = WeightBytes(c, *fp8, m, 8, true);
  const int64_t dp8 = WeightBytes(c, *fp8, m, 1, true, 8);
  const double whole = static_cast<double>(c.mixer_replicated) * fp8->linear_bytes + static_cast<double>(c.router) * 2;
  const double rest =
      (static_cast<double>(tp8) - whole) * 8 - static_cast<double>(c.routed_experts) * fp8->linear_bytes;
  EXPECT_NEAR(static_cast<double>(dp8 - tp8), rest * 7 / 8, 8.0);
  PlanOptions o = OnGpu("h200");
  o.expert_parallel = true;
  o.tensor_parallel = 8;
  o.engine.scheduler.max_model_len = 16384;
  auto tp = MakePlan(m, o);
  o.tensor_parallel = 1;
  o.data_parallel = 8;
  auto dp = MakePlan(m, o);
  ASSERT_TRUE(tp.ok() && dp.ok());
  ASSERT_TRUE(tp->startup_error.empty() && dp->startup_error.empty()) << dp->startup_error;
  EXPECT_EQ(dp->weights.bytes, dp8 + MlaDecodeCopyBytes(m, *fp8, 1));  // and vLLM's bf16 kv_b for decode
  EXPECT_GT(8 * dp->capacity.num_blocks, 3 * tp->capacity.num_blocks);
  o.data_parallel = 0;
  EXPECT_FALSE(MakePlan(m, o).ok());
}

// A step streams every weight but an untied input embedding, of which it
// gathers its tokens' rows, and a vision tower, which text never runs.
TEST(Weights, AStepReadsNeitherTheInputTableNorTheVisionTower) {
  const ModelSpec llama = Model("llama-3.1-8b");  // untied: 128,256 x 4,096 in bf16
  EXPECT_EQ(UnreadWeightBytes(CountParams(llama), llama, 1), int64_t{128'256} * 4'096 * 2);
  EXPECT_EQ(UnreadWeightBytes(CountParams(llama), llama, 2), int64_t{128'256} * 4'096);
  const ModelSpec gemma = Model("gemma-3-27b");  // tied: the table is the LM head; a SigLIP tower
  const ParamCounts g = CountParams(gemma);
  ASSERT_GT(g.vision, 0);
  EXPECT_EQ(UnreadWeightBytes(g, gemma, 1), g.vision * 2);
  EXPECT_EQ(UnreadWeightBytes(CountParams(Model("goodput-small")), Model("goodput-small"), 1), 0);
  // One decode on the plan's deployment: the step's weight bytes are the
  // plan's weights less the table, over the entry's effective bandwidth.
  PlanOptions o = OnGpu("h100");
  auto plan = MakePlan(llama, o);
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  const DeployedModel d = DeployedModelFromPlan(*plan);
  EXPECT_EQ(d.unread_weight_bytes, int64_t{128'256} * 4'096 * 2);
  const auto gpu = FindGpu("h100");
  auto factors = FactorsFor(*gpu, "bf16");
  ASSERT_TRUE(factors.ok());
  const CostModel cost(d, *factors);
  CostModel::Step step;
  cost.Add(step, 0, 1, true);
  const double read = static_cast<double>(d.weight_bytes - int64_t{128'256} * 4'096 * 2);
  EXPECT_NEAR(cost.WeightSeconds(step), read / (3.35e12 * gpu->bandwidth_efficiency), 1e-12);
}

TEST(Weights, Mxfp4ExpertsArePaddedAsVllmsMoeKernelPadsThem) {
  ModelSpec oss = Model("gpt-oss-120b");  // hidden 2,880, expert intermediate 2,880, 128 experts x 36 layers
  const ParamCounts c = CountParams(oss);
  auto marlin = ResolveMxfp4MoeBackend("marlin", "");
  ASSERT_TRUE(marlin.ok());
  auto padded = ResolveWeightPrecision("auto", oss, *marlin);
  auto plain = ResolveWeightPrecision("auto", oss);
  ASSERT_TRUE(padded.ok() && plain.ok());
  // Marlin: hidden 2,880 -> 3,072 (256), intermediate 2,880 -> 2,944 (128).
  EXPECT_DOUBLE_EQ(ExpertPaddingFactor(*padded, oss, 1, false), 3072.0 * 2944 / (2880.0 * 2880));
  const double extra = static_cast<double>(c.routed_experts) * (3072.0 * 2944 / (2880.0 * 2880) - 1) * (0.5 + 1.0 / 32);
  EXPECT_NEAR(static_cast<double>(WeightBytes(c, *padded, oss, 1) - WeightBytes(c, *plain, oss, 1)), extra, 1.0);
  // vLLM with the Marlin MoE kernel on one H100 logs "Model loading took
  // 65.9651 GiB" for this model (vllm-project/vllm#23278).
  EXPECT_NEAR(ToGiB(WeightBytes(c, *padded, oss, 1)), 65.9651, 0.2);
  // Triton pads each GPU's intermediate share to 64: nothing at TP=1
  // (2,880), 1,440 -> 1,472 at TP=2.
  auto triton = ResolveWeightPrecision("auto", oss, *ResolveMxfp4MoeBackend("triton", ""));
  EXPECT_EQ(WeightBytes(c, *triton, oss, 1), WeightBytes(c, *plain, oss, 1));
  EXPECT_DOUBLE_EQ(ExpertPaddingFactor(*triton, oss, 2, false), 1472.0 / 1440);
  EXPECT_DOUBLE_EQ(ExpertPaddingFactor(*triton, oss, 1, false), 1.0);
  // A dense model has no experts to pad.
  EXPECT_EQ(ResolveWeightPrecision("mxfp4", Model("llama-3.1-8b"), *marlin)->expert_padding.backend, "");
}

TEST(Weights, Mxfp4MoeBackendFollowsTheGpuAsVllmPicksIt) {
  const auto backend = [](const std::string& name, const std::string& arch) {
    auto b = ResolveMxfp4MoeBackend(name, arch);
    return b.ok() ? fmt::format("{} {}/{}", b->backend, b->hidden_alignment, b->intermediate_alignment)
                  : "error: " + b.status().message();
  };
  EXPECT_EQ(backend("auto", "sm80"), "marlin 256/128");
  EXPECT_EQ(backend("auto", "sm89"), "marlin 256/128");
  EXPECT_EQ(backend("auto", "sm90"), "triton 1/64");
  EXPECT_EQ(backend("auto", "sm100"), "flashinfer-sm100 256/256");
  EXPECT_EQ(backend("auto", "sm120"), "triton 1/64");
  EXPECT_EQ(backend("auto", "gfx942"), "rocm 128/128");
  EXPECT_EQ(backend("auto", "gfx950"), "rocm 256/256");
  EXPECT_EQ(backend("auto", ""), "triton 1/64");
  EXPECT_EQ(backend("flashinfer-sm90", "sm90"), "flashinfer-sm90 128/128");
  EXPECT_NE(backend("auto", "tpu7").find("not sm<N> or gfx<N>"), std::string::npos);
  EXPECT_NE(backend("auto", "sm99999999999").find("not sm<N> or gfx<N>"), std::string::npos);
  EXPECT_NE(backend("cutlass", "sm90").find("unknown MXFP4 MoE backend 'cutlass'"), std::string::npos);
  // The planner picks it from the card: A100 (Marlin) holds ~5 GiB more of
  // gpt-oss-120b than H100 (Triton), and the flag overrides the pick.
  auto a100 = MakePlan(Model("gpt-oss-120b"), OnGpu("a100-80gb"));
  auto h100 = MakePlan(Model("gpt-oss-120b"), OnGpu("h100-sxm"));
  ASSERT_TRUE(a100.ok() && h100.ok());
  EXPECT_NEAR(ToGiB(a100->weights.bytes - h100->weights.bytes), 5.1, 0.2);
  PlanOptions forced = OnGpu("h100-sxm");
  forced.mxfp4_moe_backend = "marlin";
  EXPECT_EQ(MakePlan(Model("gpt-oss-120b"), forced)->weights.bytes, a100->weights.bytes);
  // The same log (vllm#23278: Marlin on one H100, default 131,072 tokens,
  // utilization 0.9) goes on "Available KV cache memory: -2.14 GiB" and vLLM
  // does not start; so does the plan.
  auto h100_marlin = MakePlan(Model("gpt-oss-120b"), forced);
  ASSERT_TRUE(h100_marlin.ok());
  EXPECT_NEAR(ToGiB(h100_marlin->kv_pool), -2.14, 1.0);
  EXPECT_FALSE(h100_marlin->startup_error.empty());
  forced.mxfp4_moe_backend = "fast";
  auto refused = MakePlan(Model("gpt-oss-120b"), forced);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("--mxfp4-moe-backend"), std::string::npos);
}

// DeepSeek-V3 drafts with its own MTP layer (num_nextn_predict_layers 1)
// when speculative tokens are asked for without draft layers, as vLLM's mtp
// method: one more MLA layer in the KV pool (61 + 1 per block's page) and a
// drafter of one MoE layer in the cost model; n-gram-free models keep none.
TEST(Planner, SpeculativeTokensDraftWithTheCheckpointsMtpLayers) {
  PlanOptions o = OnGpu("h200");
  o.tensor_parallel = 8;
  auto plain = MakePlan(Model("deepseek-v3"), o);
  ASSERT_TRUE(plain.ok()) << plain.status().message();
  o.engine.scheduler.num_speculative_tokens = 1;
  auto mtp = MakePlan(Model("deepseek-v3"), o);
  ASSERT_TRUE(mtp.ok()) << mtp.status().message();
  EXPECT_EQ(mtp->options.num_draft_layers, 1);
  EXPECT_EQ(plain->layout.layer_specs.size() + 1, mtp->layout.layer_specs.size());
  EXPECT_EQ(mtp->layout.layer_specs.back().kind, LayerKind::kMla);
  const DeployedModel d = DeployedModelFromPlan(*mtp);
  EXPECT_EQ(d.draft_layers, 1);
  EXPECT_GT(d.draft_params, 0);
  auto llama = MakePlan(Model("llama-3.1-8b"), [] {
    PlanOptions h = OnGpu("h100-sxm");
    h.engine.scheduler.num_speculative_tokens = 3;
    return h;
  }());
  ASSERT_TRUE(llama.ok());
  EXPECT_EQ(llama->options.num_draft_layers, 0);
}

// A drafter's pass reads its layer in the weights' format and the target's LM
// head in the model dtype, as a quantized checkpoint keeps the head (and as
// the target's weights count it): Qwen3.5-27B's head is 248,320 x 5,120 bf16
// parameters in NVFP4 as in bf16, only its MTP layer shrinks. So is the join
// of hidden state and embedding (eh_proj: 2 x 5,120 x 5,120), a plain linear
// layer the checkpoint keeps in bf16.
TEST(Planner, DrafterReadsTheLmHeadInTheModelDtype) {
  const auto drafter = [](const char* weights) {
    PlanOptions o = OnGpu("b200");
    o.weights = weights;
    o.engine.scheduler.num_speculative_tokens = 8;
    auto p = MakePlan(Model("qwen3.5-27b"), o);
    EXPECT_TRUE(p.ok()) << p.status().message();
    return DeployedModelFromPlan(*p);
  };
  const DeployedModel fp4 = drafter("nvfp4"), bf16 = drafter("bf16");
  const double head = 248'320.0 * 5'120, join = 2.0 * 5'120 * 5'120;
  ASSERT_EQ(fp4.draft_params, bf16.draft_params);
  EXPECT_EQ(fp4.draft_join_params, join);
  const double layer = static_cast<double>(fp4.draft_params) - head - join;
  EXPECT_GT(layer, 0);
  EXPECT_NEAR(static_cast<double>(bf16.draft_weight_bytes), 2 * (head + join + layer), 2);
  EXPECT_NEAR(static_cast<double>(fp4.draft_weight_bytes), 2 * (head + join) + (0.5 + 1.0 / 16) * layer, 2);
}

// The join is split over tensor-parallel GPUs where the model's code splits it
// (Qwen3.5's mtp.fc, a ColumnParallelLinear in vLLM) and whole where it does
// not (DeepSeek's eh_proj, a plain nn.Linear).
TEST(Planner, ADraftersJoinIsSplitAsTheModelsCodeSplitsIt) {
  const auto join = [](const char* model, int tp) {
    PlanOptions o = OnGpu("h200");
    o.tensor_parallel = tp;
    o.engine.scheduler.num_speculative_tokens = 1;
    o.engine.scheduler.max_model_len = 8192;
    auto p = MakePlan(Model(model), o);
    EXPECT_TRUE(p.ok()) << p.status().message();
    return p.ok() ? DeployedModelFromPlan(*p).draft_join_params : -1;
  };
  EXPECT_EQ(join("qwen3.5-27b", 2), int64_t{5'120} * 5'120);
  EXPECT_EQ(join("deepseek-v3", 8), int64_t{2} * 7'168 * 7'168);
}

}  // namespace
}  // namespace goodput
