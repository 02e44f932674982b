// PrefillKvCopyBytes: the 16-bit copy vLLM's FlashInfer backend makes of each
// prefill's pages when the KV cache is fp8, the query is not quantized and the
// prefill runs TensorRT-LLM's kernel on sm100. Figures by hand from the block
// table's width (vllm/v1/attention/backends/flashinfer.py,
// trtllm_prefill_attn_kvfp8_dequant: num_prefills x width + 1 pages).
#include <gtest/gtest.h>

#include "model/catalog.h"
#include "plan/plan_testing.h"
#include "plan/planner.h"

namespace goodput {
namespace {

Plan PlanOn(const std::string& gpu, const std::string& model, const std::string& kv, bool unquantized_query,
            int64_t max_model_len = 0) {
  PlanOptions o = OnGpu(gpu);
  o.engine.cache.kv_cache_dtype = kv;
  o.engine.scheduler.max_model_len = max_model_len;
  o.disable_flashinfer_q_quantization = unquantized_query;
  auto p = MakePlan(*LoadModel(model), o);
  EXPECT_TRUE(p.ok()) << p.status().message();
  return *p;
}

// Qwen3.5-27B in fp8 on a B200: attention pages of 1,568 tokens (raised to
// hold a DeltaNet state page, so FlashInfer's own prefill, 16-64 token pages
// on sm100, cannot serve it), 4 KV heads x 256 x K and V x 2 bytes = 4,096
// bytes a token in bf16. At 240,000 tokens: cdiv(240000, 1568) + 1 = 155
// pages, 243,040 tokens, 995,491,840 bytes (0.93 GiB) a prefilling request.
TEST(PrefillKvCopy, HybridModelCopiesItsBlockTablesFullWidth) {
  const Plan p = PlanOn("b200", "qwen3.5-27b", "fp8", true, 240000);
  EXPECT_EQ(p.layout.attention_block_size, 1568);
  EXPECT_EQ(p.prefill_kv_copy, int64_t{155} * 1568 * 4096);
  EXPECT_EQ(p.Margin(), p.headroom - p.cuda_graphs.bytes - p.prefill_kv_copy - p.options.safety_buffer);
  // The same request length at 1M tokens of max model length: the width, not
  // the prompt, sizes it (cdiv(1048576, 1568) + 1 = 670 pages).
  EXPECT_EQ(PlanOn("b200", "qwen3.5-27b", "fp8", true, 1 << 20).prefill_kv_copy, int64_t{670} * 1568 * 4096);
}

// gpt-oss's attention sinks run only on TensorRT-LLM's kernels, so 16-token
// pages take the copy too: 8 KV heads x 64 x 2 x 2 = 2,048 bytes a token,
// 131,072 / 16 + 1 = 8,193 pages.
TEST(PrefillKvCopy, AttentionSinksTakeTheCopyAtAnyBlockSize) {
  EXPECT_EQ(PlanOn("b200", "gpt-oss-20b", "fp8", true).prefill_kv_copy, int64_t{8193} * 16 * 2048);
}

TEST(PrefillKvCopy, NoneOffThatPath) {
  EXPECT_EQ(PlanOn("b200", "qwen3.5-27b", "auto", true).prefill_kv_copy, 0);  // 16-bit KV: nothing to convert
  EXPECT_EQ(PlanOn("b200", "qwen3.5-27b", "fp8", false).prefill_kv_copy, 0);  // vLLM's default: fp8 query
  EXPECT_EQ(PlanOn("h200", "qwen3.5-27b", "fp8", true).prefill_kv_copy, 0);   // sm90: no TensorRT-LLM prefill
  EXPECT_EQ(PlanOn("b200", "llama-3.1-8b", "fp8", true).prefill_kv_copy, 0);  // FlashInfer's own prefill
  EXPECT_EQ(PlanOn("b200", "deepseek-v3", "fp8", true).prefill_kv_copy, 0);   // MLA: another backend
  const Plan plain = PlanOn("b200", "qwen3.5-27b", "fp8", false);
  EXPECT_EQ(plain.Margin(), plain.headroom - plain.cuda_graphs.bytes - plain.options.safety_buffer);
}

}  // namespace
}  // namespace goodput
