#include "hw/kernel_count.h"

#include <gtest/gtest.h>

#include "model/catalog.h"

namespace goodput {
namespace {

// Llama's decoder layer as vLLM's llama.py runs it, counted by hand:
// input_layernorm, qkv_proj, rotary_emb, reshape_and_cache, attention,
// o_proj, post_attention_layernorm, gate_up_proj, SiluAndMul, down_proj.
TEST(KernelCount, LlamaLayerIsTenKernels) {
  const ModelSpec m = *LoadModel("llama-3.1-8b");
  EXPECT_EQ(KernelsInLayer(m, m.layers.front(), "bf16"), 10);
  // FP8 weights quantize the activations before each of the four projections.
  EXPECT_EQ(KernelsInLayer(m, m.layers.front(), "fp8"), 14);
  // Weight-only int4 dequantizes inside the GEMM: no extra kernel.
  EXPECT_EQ(KernelsInLayer(m, m.layers.front(), "int4"), 10);
  // 32 layers, then embedding, final norm, LM head and the sampler's two.
  EXPECT_EQ(KernelsPerForward(m, "bf16"), 32 * 10 + 5);
}

// Qwen3 adds q_norm and k_norm to each attention.
TEST(KernelCount, Qwen3AddsItsQkNorms) {
  const ModelSpec m = *LoadModel("qwen3-8b");
  EXPECT_EQ(KernelsInLayer(m, m.layers.front(), "bf16"), 12);
}

// DeepSeek-V3 in FP8 blocks: an MLA layer (fused_qkv_a_proj, q_a and kv_a
// norms, q_b_proj, rotary, concat_and_cache_mla, W_UK, attention and its
// combine, W_UV, o_proj: 11, three of them FP8 projections) with the two
// layer norms; the first three layers have a dense MLP (3, two projections),
// the other 58 routed experts (router, top-k, align, two grouped GEMMs with
// the activation, moe_sum: 7) and the shared expert (3 and the add). One
// quantization kernel per FP8 projection.
TEST(KernelCount, DeepSeekLayersAreMostlyTinyKernels) {
  const ModelSpec m = *LoadModel("deepseek-v3");
  ASSERT_EQ(m.layers.size(), 61u);
  const int dense = 2 + 11 + 3 + (3 + 2);
  const int moe = 2 + 11 + 7 + 4 + (3 + 4);
  EXPECT_EQ(KernelsInLayer(m, m.layers.front(), "fp8-block"), dense);
  EXPECT_EQ(KernelsInLayer(m, m.layers.back(), "fp8-block"), moe);
  EXPECT_EQ(KernelsPerForward(m, "fp8-block"), 3 * dense + 58 * moe + 5);
  // The MTP layer: enorm, hnorm, eh_proj (vLLM's plain nn.Linear in BF16, so
  // no quantization kernel before it), a MoE decoder layer, then the LM head's four.
  EXPECT_EQ(KernelsPerDraftPass(m, 1, "fp8-block"), 3 + moe + 4);
  EXPECT_EQ(KernelsPerDraftPass(m, 0, "fp8-block"), 0);
}

// gpt-oss keeps attention in BF16 (its checkpoint's modules_to_not_convert):
// only the experts' projections would take quantized activations.
TEST(KernelCount, AttentionLeftOutOfQuantizationTakesNoQuantKernels) {
  const ModelSpec m = *LoadModel("gpt-oss-20b");
  const int plain = KernelsInLayer(m, m.layers.front(), "bf16");
  EXPECT_EQ(KernelsInLayer(m, m.layers.front(), "fp8", /*attention_unquantized=*/true), plain + 2);
  // Given FP8 throughout (no --unquantized attention), its qkv and o projections take one each too,
  // as the weight bytes count them in FP8.
  EXPECT_EQ(KernelsInLayer(m, m.layers.front(), "fp8"), plain + 4);
}

}  // namespace
}  // namespace goodput
