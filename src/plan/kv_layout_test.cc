// Checks the KV accounting against figures vLLM printed (published logs and
// PR descriptions, cited per test) and against hand calculations.
#include "plan/kv_layout.h"

#include <gtest/gtest.h>

#include "model/catalog.h"

namespace goodput {
namespace {

constexpr int64_t kMiB = int64_t{1} << 20;
constexpr int64_t kGiB = int64_t{1} << 30;

ModelSpec Model(const std::string& name) {
  auto m = LoadModel(name);
  EXPECT_TRUE(m.ok()) << m.status().message();
  return *m;
}

KvLayout Layout(const ModelSpec& m, DType kv = DType::kBFloat16, int tp = 1, int64_t max_len = 131072,
                DType ssm = DType::kFloat32) {
  KvLayoutOptions o;
  o.kv_dtype = kv;
  o.conv_state_dtype = DType::kBFloat16;
  o.ssm_state_dtype = ssm;
  o.tensor_parallel = tp;
  o.max_model_len = max_len;
  auto l = BuildKvLayout(m, o);
  EXPECT_TRUE(l.ok()) << l.status().message();
  return *l;
}

// Llama-3.1-8B: 32 layers x 2 (K, V) x 8 KV heads x 128 x 2 bytes = 131,072 B/token.
TEST(KvLayout, LlamaIsOneUniformGroup) {
  KvLayout l = Layout(Model("llama-3.1-8b"));
  ASSERT_EQ(l.groups.size(), 1u);
  EXPECT_EQ(l.group_size, 32);
  EXPECT_EQ(l.page_bytes, 16 * 4096);
  EXPECT_EQ(l.layer_specs[0].bytes_per_token * 32, 131072);
  EXPECT_EQ(l.padding_layers, 0);
}

// The issue's published H100 figure: 420,864 tokens = 26,304 blocks of 16,
// i.e. a pool of 51.375-51.377 GiB ("51.38 GiB" in the log).
TEST(KvLayout, Llama8BPoolOf26304Blocks) {
  KvLayout l = Layout(Model("llama-3.1-8b"));
  const int64_t pool = 26304 * 2 * kMiB + kMiB;  // anything short of the next block
  KvCapacity c = ComputeCapacity(l, pool, 131072, 8192);
  EXPECT_EQ(c.num_blocks, 26304);
  EXPECT_EQ(c.tokens_per_group, 420864);
  EXPECT_EQ(c.tokens_concurrency, 420864);
  EXPECT_NEAR(c.max_concurrency, 3.21, 0.005);
}

// The issue's EAGLE figure: Llama-3.1-8B plus one draft layer = 33 KV layers,
// 51.63 GiB of KV -> exactly 410,128 tokens.
TEST(KvLayout, EagleDraftLayerSharesThePool) {
  ModelSpec m = Model("llama-3.1-8b");
  m.layers.push_back(LayerSpec{LayerKind::kFullAttention, MlpKind::kDense, 0});
  KvLayout l = Layout(m);
  EXPECT_EQ(l.group_size, 33);
  const auto pool = static_cast<int64_t>(51.63 * kGiB);
  EXPECT_EQ(ComputeCapacity(l, pool, 131072, 8192).tokens_per_group, 410128);
}

// vLLM PR #13596 (the "GPU KV cache size" line's debut): 127,626 blocks print
// "GPU KV cache size: 2,042,016 tokens" and "Maximum concurrency for 2,048
// tokens per request: 997.08x".
TEST(KvLayout, Pr13596StartupLines) {
  KvLayout l = Layout(Model("llama-3.1-8b"), DType::kBFloat16, 1, 2048);
  KvCapacity c = ComputeCapacity(l, 127626 * l.page_bytes * l.group_size, 2048, 8192);
  EXPECT_EQ(c.tokens_per_group, 2042016);
  EXPECT_NEAR(c.max_concurrency, 997.08, 0.005);
}

// vLLM issue #8185, Llama-3.1-8B on an RTX 3090: 1,952 blocks give 1.56x for
// 20,000-token requests; 1,478 blocks give 0.82x for 29,000 and "the maximum
// number of tokens that can be stored in KV cache (23648)".
TEST(KvLayout, Issue8185Concurrency) {
  KvLayout l = Layout(Model("llama-3.1-8b"), DType::kBFloat16, 1, 20000);
  EXPECT_NEAR(ComputeCapacity(l, 1952 * 2 * kMiB, 20000, 2048).max_concurrency, 1.56, 0.005);
  KvCapacity c = ComputeCapacity(l, 1478 * 2 * kMiB, 29000, 2048);
  EXPECT_NEAR(c.max_concurrency, 0.82, 0.005);
  EXPECT_EQ(c.num_blocks * 16, 23648);
}

// The issue's figures for Qwen3.5-9B: attention block size 528 with bf16 KV
// and 1056 with fp8 KV (fp32 SSM state). By hand: DeltaNet state = conv
// (2*16*128 + 32*128) x 3 x 2 B + 32 x 128 x 128 x 4 B = 2,146,304 B; one
// attention token = 2 x 4 x 256 x 2 B = 4,096 B; 16 * ceil(2,146,304 / 65,536) = 528.
// vLLM logs for Qwen3.5 then print "Padding mamba page size by 0.76%".
TEST(KvLayout, Qwen35AttentionBlockFitsTheStatePage) {
  ModelSpec m = Model("qwen3.5-9b");
  KvLayout bf16 = Layout(m, DType::kBFloat16);
  EXPECT_EQ(bf16.state_page_bytes, 2146304);
  EXPECT_EQ(bf16.attention_block_size, 528);
  EXPECT_TRUE(bf16.block_size_raised);
  EXPECT_EQ(bf16.page_bytes, 528 * 4096);
  ASSERT_EQ(bf16.log_lines.size(), 2u);
  EXPECT_EQ(bf16.log_lines[0],
            "Setting attention block size to 528 tokens to ensure that attention page size is >= mamba page size.");
  EXPECT_EQ(bf16.log_lines[1],
            "Padding mamba page size by 0.76% to ensure that mamba page size and attention page size are exactly "
            "equal.");
  KvLayout fp8 = Layout(m, DType::kFp8E4M3);
  EXPECT_EQ(fp8.attention_block_size, 1056);
  // 24 DeltaNet layers and 8 attention layers: groups of 8, three state groups and one attention group.
  EXPECT_EQ(bf16.group_size, 8);
  EXPECT_EQ(bf16.groups.size(), 4u);
  EXPECT_EQ(bf16.padding_layers, 0);
}

// A published vLLM log for a 64-layer Qwen3.5-27B-shaped model: "Setting
// attention block size to 784 tokens" and "Padding mamba page size by 0.13%".
TEST(KvLayout, Qwen35_27BBlockSize) {
  KvLayout l = Layout(Model("qwen3.5-27b"));
  EXPECT_EQ(l.attention_block_size, 784);
  EXPECT_NEAR(l.state_padding_pct, 0.13, 0.005);
  EXPECT_EQ(l.groups.size(), 4u);
  EXPECT_EQ(l.group_size, 16);
}

// Gemma 3 27B: 52 sliding + 10 full layers. Groups of 10: six sliding groups
// (8 padding layers: "may waste at most 15.38%") and one full group.
TEST(KvLayout, Gemma3SlidingGroupsWithPadding) {
  KvLayout l = Layout(Model("gemma-3-27b"));
  EXPECT_EQ(l.group_size, 10);
  EXPECT_EQ(l.groups.size(), 7u);
  EXPECT_EQ(l.padding_layers, 8);
  EXPECT_EQ(l.log_lines[0], "Add 8 padding layers, may waste at most 15.38% KV cache memory");
  // One 131,072-token request: 8,192 full blocks + 6 x (ceil((1024 - 1 + 8192) / 16) + 1) sliding blocks.
  EXPECT_EQ(ReservedBlocks(l.EngineGroups(), 131072, 8192), 8192 + 6 * (576 + 1));
  // The sliding layers only hold the window: a 100-token request holds 7 blocks in each group.
  EXPECT_EQ(PeakBlocks(l.EngineGroups(), 100, 8192), 7 * 7);
}

TEST(KvLayout, GptOssTwoEqualGroups) {
  KvLayout l = Layout(Model("gpt-oss-20b"));
  EXPECT_EQ(l.group_size, 12);
  EXPECT_EQ(l.groups.size(), 2u);
  EXPECT_EQ(l.padding_layers, 0);
  EXPECT_EQ(l.layer_specs[0].bytes_per_token, 2 * 8 * 64 * 2);
}

// MLA caches one latent of kv_lora_rank + rope dims per token per layer, not
// split by tensor parallelism, in blocks of 64.
TEST(KvLayout, DeepSeekMlaLatent) {
  ModelSpec m = Model("deepseek-v3");
  KvLayout bf16 = Layout(m, DType::kBFloat16, 8, 163840);
  EXPECT_EQ(bf16.layer_specs[0].bytes_per_token, (512 + 64) * 2);
  EXPECT_EQ(bf16.attention_block_size, 64);
  EXPECT_EQ(bf16.page_bytes, 64 * 1152);
  EXPECT_EQ(Layout(m, DType::kFp8E4M3, 8, 163840).layer_specs[0].bytes_per_token, 576);
}

// Tensor parallelism splits KV heads, and replicates them past their number.
TEST(KvLayout, TensorParallelSplitsKvHeads) {
  ModelSpec m = Model("llama-3.1-70b");
  EXPECT_EQ(Layout(m, DType::kBFloat16, 1).layer_specs[0].bytes_per_token, 2 * 8 * 128 * 2);
  EXPECT_EQ(Layout(m, DType::kBFloat16, 4).layer_specs[0].bytes_per_token, 2 * 2 * 128 * 2);
  EXPECT_EQ(Layout(m, DType::kBFloat16, 16).layer_specs[0].bytes_per_token, 2 * 1 * 128 * 2);
}

TEST(KvLayout, Qwen3NextStateSplitsAcrossTensorParallel) {
  ModelSpec m = Model("qwen3-next-80b-a3b");
  // conv (2*16*128 + 32*128) x 3 x 2 B + 32 x 128 x 128 x 2 B (bf16 state: no mamba_ssm_dtype in its config).
  EXPECT_EQ(Layout(m, DType::kBFloat16, 1, 262144, DType::kBFloat16).state_page_bytes,
            8192 * 3 * 2 + 32 * 128 * 128 * 2);
  EXPECT_EQ(Layout(m, DType::kBFloat16, 4, 262144, DType::kBFloat16).state_page_bytes,
            (8192 * 3 * 2 + 32 * 128 * 128 * 2) / 4);
}

TEST(KvLayout, DisablingTheHybridManagerKeepsSlidingLayersWhole) {
  ModelSpec m = Model("gpt-oss-20b");
  KvLayoutOptions o;
  o.max_model_len = 131072;
  o.disable_hybrid_kv_cache_manager = true;
  auto l = BuildKvLayout(m, o);
  ASSERT_TRUE(l.ok());
  EXPECT_EQ(l->groups.size(), 1u);
  EXPECT_EQ(ReservedBlocks(l->EngineGroups(), 131072, 8192), 8192);
}

}  // namespace
}  // namespace goodput

namespace goodput {
namespace {

// A pool sized elsewhere (the CPU engine's): a full-attention group and a
// 512-token sliding group, 1,000 blocks, 4,096-token requests, 2,048-token
// budget. By hand: full 4096 / 16 = 256 blocks; sliding
// ceil(min(511 + 2048, 4096) / 16) + 1 = 161; 1000 / 417 = 2.398x;
// int(2.398 x 4096) = 9,822 tokens; earlier vLLM: 1000 / 2 x 16 = 8,000.
TEST(KvCapacity, ForAPoolSizedElsewhere) {
  KvGroupSpec full;
  KvGroupSpec sliding{KvGroupSpec::Type::kSlidingWindow, 16, 512};
  const KvCapacity c = CapacityForBlocks({full, sliding}, 1000, 4096, 2048);
  EXPECT_NEAR(c.max_concurrency, 1000.0 / 417.0, 1e-12);
  EXPECT_EQ(c.tokens_concurrency, 9822);
  EXPECT_EQ(c.tokens_per_group, 8000);
  EXPECT_EQ(KvCapacityLogLines(c, 4096),
            "GPU KV cache size: 9,822 tokens\nMaximum concurrency for 4,096 tokens per request: 2.40x\n");
}

}  // namespace
}  // namespace goodput
