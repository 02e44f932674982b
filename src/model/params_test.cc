#include "model/params.h"

#include <gtest/gtest.h>

#include "model/catalog.h"

namespace goodput {
namespace {

ParamCounts Count(const std::string& name) {
  auto m = LoadModel(name);
  EXPECT_TRUE(m.ok()) << m.status().message();
  return m.ok() ? CountParams(*m) : ParamCounts{};
}

// Exact totals of the published safetensors checkpoints (Hugging Face model pages).
TEST(CountParams, LlamaMatchesCheckpointsExactly) {
  EXPECT_EQ(Count("llama-3.1-8b").total(), 8'030'261'248);
  EXPECT_EQ(Count("llama-3.1-70b").total(), 70'553'706'496);
}

// OpenAI's gpt-oss model card: 116.83B total / 5.13B active and 20.91B / 3.61B,
// where "active" leaves out the embedding table (a lookup, not a matmul).
TEST(CountParams, GptOssMatchesTheModelCard) {
  ParamCounts big = Count("gpt-oss-120b");
  EXPECT_NEAR(big.total() / 1e9, 116.83, 0.01);
  EXPECT_NEAR(big.active / 1e9, 5.13, 0.01);
  ParamCounts small = Count("gpt-oss-20b");
  EXPECT_NEAR(small.total() / 1e9, 20.91, 0.01);
  EXPECT_NEAR(small.active / 1e9, 3.61, 0.01);
}

// DeepSeek-V3 technical report: 671B total, 37B activated per token (the MTP
// module's 14B are separate and not counted).
TEST(CountParams, DeepSeekV3MatchesTheReport) {
  ParamCounts c = Count("deepseek-v3");
  EXPECT_NEAR(c.total() / 1e9, 671.0, 0.5);
  EXPECT_NEAR(c.active / 1e9, 37.0, 1.0);
}

// Qwen3 model cards: Qwen3-32B 32.8B (31.2B non-embedding); Qwen3-8B 8.2B
// (6.95B non-embedding); Qwen3-30B-A3B 30.5B total (29.9B non-embedding),
// 3.3B activated.
TEST(CountParams, QwenMatchesTheModelCards) {
  ParamCounts dense = Count("qwen3-32b");
  EXPECT_NEAR(dense.total() / 1e9, 32.8, 0.05);
  EXPECT_NEAR((dense.total() - dense.embedding - dense.lm_head) / 1e9, 31.2, 0.05);
  ParamCounts small = Count("qwen3-8b");
  EXPECT_NEAR(small.total() / 1e9, 8.2, 0.05);
  EXPECT_NEAR((small.total() - small.embedding - small.lm_head) / 1e9, 6.95, 0.005);
  ParamCounts moe = Count("qwen3-30b-a3b");
  EXPECT_NEAR(moe.total() / 1e9, 30.5, 0.05);
  EXPECT_NEAR((moe.total() - moe.embedding - moe.lm_head) / 1e9, 29.9, 0.05);
  // Qwen counts the embedding table as activated; gpt-oss's card does not.
  EXPECT_NEAR((moe.active + moe.embedding) / 1e9, 3.3, 0.1);
}

// Llama-2-13B by hand: embedding and LM head 32,000 x 5,120 each; a layer
// 4 x 5,120^2 (attention) + 3 x 5,120 x 13,824 (MLP) + 2 x 5,120 (norms);
// 40 layers and the final norm: 13,015,864,320.
TEST(CountParams, Llama2_13BByHand) {
  const double layer = 4.0 * 5120 * 5120 + 3.0 * 5120 * 13824 + 2 * 5120;
  EXPECT_EQ(Count("llama-2-13b").total(), 2.0 * 32000 * 5120 + 40 * layer + 5120);
  EXPECT_EQ(Count("llama-2-13b").total(), 13015864320.0);
}

// Gemma 3 27B's checkpoint (language model plus SigLIP vision tower): 27.4B.
TEST(CountParams, Gemma3IncludesTheVisionTower) {
  ParamCounts c = Count("gemma-3-27b");
  EXPECT_NEAR(c.total() / 1e9, 27.43, 0.01);
  EXPECT_GT(c.vision, 400'000'000);
  EXPECT_LT(c.vision, 450'000'000);
  EXPECT_EQ(c.lm_head, 0);  // tied
}

// The Qwen3-Next card says "80B in total and 3B activated"; the 3B is the
// rounded name (A3B), so only the total is checked closely here.
TEST(CountParams, Qwen3NextIsEightyBillion) {
  ParamCounts c = Count("qwen3-next-80b-a3b");
  EXPECT_NEAR(c.total() / 1e9, 80.0, 1.0);
  EXPECT_GT(c.active, 3'000'000'000);
  EXPECT_LT(c.active, 4'000'000'000);
}

}  // namespace
}  // namespace goodput
