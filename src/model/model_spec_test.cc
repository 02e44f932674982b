#include "model/model_spec.h"

#include <boost/json.hpp>
#include <gtest/gtest.h>

#include "model/catalog.h"

namespace goodput {
namespace {

ModelSpec Load(const std::string& name) {
  auto m = LoadModel(name);
  EXPECT_TRUE(m.ok()) << m.status().message();
  return m.ok() ? *m : ModelSpec{};
}

Result<ModelSpec> ParseText(const std::string& text) {
  return ParseModelConfig(boost::json::parse(text), "test");
}

TEST(ModelSpec, Llama31_8B) {
  ModelSpec m = Load("llama-3.1-8b");
  EXPECT_EQ(m.model_type, "llama");
  EXPECT_EQ(m.num_layers, 32);
  EXPECT_EQ(m.CountLayers(LayerKind::kFullAttention), 32);
  EXPECT_EQ(m.attn.num_heads, 32);
  EXPECT_EQ(m.attn.num_kv_heads, 8);
  EXPECT_EQ(m.attn.head_dim, 128);
  EXPECT_EQ(m.vocab_size, 128256);
  EXPECT_EQ(m.max_position_embeddings, 131072);
  EXPECT_FALSE(m.tie_word_embeddings);
  EXPECT_EQ(m.dtype, DType::kBFloat16);
  EXPECT_FALSE(m.IsMoe());
}

TEST(ModelSpec, Gemma3SparseConfigTakesTransformersDefaults) {
  ModelSpec m = Load("gemma-3-27b");
  EXPECT_EQ(m.model_type, "gemma3_text");
  EXPECT_EQ(m.num_layers, 62);
  EXPECT_EQ(m.vocab_size, 262208);              // default: absent from the config
  EXPECT_EQ(m.max_position_embeddings, 131072);  // default
  EXPECT_TRUE(m.tie_word_embeddings);            // default
  EXPECT_EQ(m.attn.head_dim, 128);
  EXPECT_EQ(m.attn.num_kv_heads, 16);
  // Pattern 6: layers 5, 11, ..., 59 are global.
  EXPECT_EQ(m.CountLayers(LayerKind::kFullAttention), 10);
  EXPECT_EQ(m.CountLayers(LayerKind::kSlidingAttention), 52);
  EXPECT_EQ(m.layers[5].kind, LayerKind::kFullAttention);
  EXPECT_EQ(m.layers[0].kind, LayerKind::kSlidingAttention);
  EXPECT_EQ(m.layers[0].sliding_window, 1024);
  ASSERT_TRUE(m.vision.has_value());
  EXPECT_EQ(m.vision->layers, 27);
}

TEST(ModelSpec, GptOssAlternatesSlidingAndFull) {
  ModelSpec m = Load("gpt-oss-20b");
  EXPECT_EQ(m.CountLayers(LayerKind::kSlidingAttention), 12);
  EXPECT_EQ(m.CountLayers(LayerKind::kFullAttention), 12);
  EXPECT_EQ(m.layers[0].sliding_window, 128);
  EXPECT_EQ(m.moe.num_experts, 32);
  EXPECT_EQ(m.moe.experts_per_token, 4);
  EXPECT_TRUE(m.attn.sinks);
  EXPECT_EQ(m.quant.method, "mxfp4");
  EXPECT_TRUE(m.quant.attention_excluded);
}

TEST(ModelSpec, Qwen3NextEveryFourthLayerIsFullAttention) {
  ModelSpec m = Load("qwen3-next-80b-a3b");
  EXPECT_EQ(m.CountLayers(LayerKind::kFullAttention), 12);
  EXPECT_EQ(m.CountLayers(LayerKind::kLinearAttention), 36);
  EXPECT_EQ(m.layers[3].kind, LayerKind::kFullAttention);
  EXPECT_EQ(m.linear.num_value_heads, 32);
  EXPECT_EQ(m.linear.conv_kernel, 4);
  EXPECT_EQ(m.moe.num_experts, 512);
  EXPECT_EQ(m.moe.shared_intermediate, 512);
  EXPECT_TRUE(m.attn.output_gate);
  EXPECT_FALSE(m.ssm_state_dtype.has_value());
}

TEST(ModelSpec, Qwen35NestedTextConfig) {
  ModelSpec m = Load("qwen3.5-9b");
  EXPECT_EQ(m.model_type, "qwen3_5_text");
  EXPECT_EQ(m.hidden_size, 4096);
  EXPECT_EQ(m.CountLayers(LayerKind::kFullAttention), 8);
  EXPECT_EQ(m.CountLayers(LayerKind::kLinearAttention), 24);
  ASSERT_TRUE(m.ssm_state_dtype.has_value());
  EXPECT_EQ(*m.ssm_state_dtype, DType::kFloat32);
  EXPECT_EQ(m.mtp_layers, 1);
  EXPECT_FALSE(m.tie_word_embeddings);
}

TEST(ModelSpec, DeepSeekV3IsMlaWithDenseFirstLayers) {
  ModelSpec m = Load("deepseek-v3");
  EXPECT_EQ(m.CountLayers(LayerKind::kMla), 61);
  EXPECT_EQ(m.mla.kv_lora_rank, 512);
  EXPECT_EQ(m.mla.qk_rope_head_dim, 64);
  EXPECT_EQ(m.layers[2].mlp, MlpKind::kDense);
  EXPECT_EQ(m.layers[3].mlp, MlpKind::kMoe);
  EXPECT_EQ(m.moe.shared_intermediate, 2048);
  EXPECT_EQ(m.quant.method, "fp8");
  EXPECT_EQ(m.quant.block, 128);
  EXPECT_EQ(m.mtp_layers, 1);
}

TEST(ModelSpec, Qwen3UseSlidingWindowFalseMeansNone) {
  auto m = ParseText(R"({"model_type":"qwen2","hidden_size":64,"num_hidden_layers":2,"vocab_size":10,
      "num_attention_heads":4,"max_position_embeddings":128,"sliding_window":32,"use_sliding_window":false})");
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ(m->CountLayers(LayerKind::kFullAttention), 2);
  auto mistral = ParseText(R"({"model_type":"mistral","hidden_size":64,"num_hidden_layers":2,"vocab_size":10,
      "num_attention_heads":4,"max_position_embeddings":128,"sliding_window":32})");
  ASSERT_TRUE(mistral.ok());
  EXPECT_EQ(mistral->CountLayers(LayerKind::kSlidingAttention), 2);
}

TEST(ModelSpec, NemotronHPattern) {
  auto m = ParseText(R"({"model_type":"nemotron_h","hidden_size":64,"num_hidden_layers":6,"vocab_size":10,
      "num_attention_heads":4,"num_key_value_heads":2,"head_dim":16,"max_position_embeddings":128,
      "intermediate_size":128,"hybrid_override_pattern":"M-M*-M","mamba_num_heads":8,"mamba_head_dim":16,
      "ssm_state_size":32,"conv_kernel":4,"n_groups":2})");
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ(m->CountLayers(LayerKind::kMamba2), 3);
  EXPECT_EQ(m->CountLayers(LayerKind::kFullAttention), 1);
  EXPECT_EQ(m->CountLayers(LayerKind::kMlpOnly), 2);
  EXPECT_EQ(m->mamba.d_inner, 128);
  EXPECT_EQ(m->layers[1].mlp, MlpKind::kDense);
  EXPECT_EQ(m->layers[0].mlp, MlpKind::kNone);
}

TEST(ModelSpec, JambaAttentionPeriodAndOffset) {
  auto m = ParseText(R"({"model_type":"jamba","hidden_size":64,"num_hidden_layers":16,"vocab_size":10,
      "num_attention_heads":4,"num_key_value_heads":2,"max_position_embeddings":128,"intermediate_size":128,
      "attn_layer_period":8,"attn_layer_offset":4,"expert_layer_period":2,"expert_layer_offset":1,
      "num_experts":4,"num_experts_per_tok":2,"mamba_d_state":16,"mamba_d_conv":4,"mamba_expand":2,
      "mamba_dt_rank":4})");
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ(m->CountLayers(LayerKind::kFullAttention), 2);
  EXPECT_EQ(m->layers[4].kind, LayerKind::kFullAttention);
  EXPECT_EQ(m->layers[12].kind, LayerKind::kFullAttention);
  EXPECT_EQ(m->CountLayers(LayerKind::kMamba), 14);
  EXPECT_EQ(m->layers[1].mlp, MlpKind::kMoe);
  EXPECT_EQ(m->layers[2].mlp, MlpKind::kDense);
  EXPECT_EQ(m->mamba.d_inner, 128);
}

void ExpectError(const std::string& text, const std::string& needle) {
  auto m = ParseText(text);
  ASSERT_FALSE(m.ok()) << text;
  EXPECT_NE(m.status().message().find(needle), std::string::npos) << m.status().message();
}

TEST(ModelSpec, BrokenConfigsNameTheField) {
  ExpectError(R"({"model_type":"llama","num_hidden_layers":2,"vocab_size":10,"num_attention_heads":4,
      "max_position_embeddings":128})", "missing field \"hidden_size\"");
  ExpectError(R"({"model_type":"llama","hidden_size":"big","num_hidden_layers":2,"vocab_size":10,
      "num_attention_heads":4,"max_position_embeddings":128})", "\"hidden_size\" must be a whole number");
  ExpectError(R"({"model_type":"gpt_oss","hidden_size":64,"num_hidden_layers":3,"vocab_size":10,
      "num_attention_heads":4,"max_position_embeddings":128,"layer_types":["full_attention"]})",
              "lists 1 layers but num_hidden_layers is 3");
  ExpectError(R"({"model_type":"x","hidden_size":64,"num_hidden_layers":1,"vocab_size":10,
      "num_attention_heads":4,"max_position_embeddings":128,"layer_types":["warp_attention"]})",
              "unknown layer type \"warp_attention\"");
  ExpectError(R"({"hidden_size":64})", "missing field \"model_type\"");
  ExpectError(R"({"model_type":"llama","hidden_size":64,"num_hidden_layers":2,"vocab_size":10,
      "num_attention_heads":0,"max_position_embeddings":128})", "num_attention_heads");
  ExpectError(R"([1,2])", "not a JSON object");
  // Sizes no model has are refused, not allocated (vocab_size 1e12 died in std::bad_alloc).
  ExpectError(R"({"model_type":"llama","hidden_size":64,"num_hidden_layers":2,"vocab_size":1e12,
      "num_attention_heads":4,"max_position_embeddings":128})", "a size beyond any model's");
  ExpectError(R"({"model_type":"llama","hidden_size":64,"num_hidden_layers":2,"vocab_size":1e30,
      "num_attention_heads":4,"max_position_embeddings":128})", "\"vocab_size\" must be a whole number");
  ExpectError(R"({"model_type":"llama","hidden_size":64,"num_hidden_layers":2,"vocab_size":10,
      "num_attention_heads":4,"max_position_embeddings":18446744073709551615})", "must be a non-negative number");
  ExpectError(R"({"model_type":"llama","hidden_size":64,"num_hidden_layers":2,"vocab_size":10,
      "num_attention_heads":4,"head_dim":1099511627777,"max_position_embeddings":128})", "must be below 2^40");
}

TEST(Catalog, UnknownNameListsKnownModels) {
  auto m = LoadModel("llama-9000");
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("llama-3.1-8b"), std::string::npos);
  EXPECT_NE(m.status().message().find("qwen3.5-27b"), std::string::npos);
}

TEST(Catalog, NamesAreCaseInsensitive) {
  auto m = LoadModel("Llama-3.1-8B");
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->name, "llama-3.1-8b");
}

// A drafter's layer copies the last attention layer, not the last layer: a
// hybrid ending in a state layer drafts with its attention; a sliding window
// drafts with full attention; MLA stays MLA; no attention, no draft layer.
TEST(ModelSpec, DraftLayerCopiesTheLastAttentionLayer) {
  ModelSpec m;
  m.layers = {{LayerKind::kSlidingAttention, MlpKind::kMoe, 128}, {LayerKind::kMamba2, MlpKind::kDense, 0}};
  ASSERT_TRUE(m.DraftLayer().has_value());
  EXPECT_EQ(m.DraftLayer()->kind, LayerKind::kFullAttention);
  EXPECT_EQ(m.DraftLayer()->mlp, MlpKind::kMoe);
  EXPECT_EQ(m.DraftLayer()->sliding_window, 0);
  const ModelSpec deepseek = Load("deepseek-v3");
  EXPECT_EQ(deepseek.DraftLayer()->kind, LayerKind::kMla);
  EXPECT_EQ(deepseek.DraftLayer()->mlp, MlpKind::kMoe);
  m.layers = {{LayerKind::kMamba, MlpKind::kDense, 0}};
  EXPECT_FALSE(m.DraftLayer().has_value());
}

}  // namespace
}  // namespace goodput
