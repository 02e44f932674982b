// ModelSpec: what a Hugging Face config.json says about a model's shape, and
// what each layer keeps per sequence (its layer kind).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "model/dtype.h"

namespace boost::json {
class value;
}

namespace goodput {

enum class LayerKind {
  kFullAttention,     // KV grows with length
  kSlidingAttention,  // KV capped at the window
  kMla,               // DeepSeek multi-head latent attention: one latent "head" per token
  kLinearAttention,   // Gated DeltaNet (Qwen3-Next, Qwen3.5): constant state per sequence
  kMamba,             // Mamba-1 (Jamba): constant state per sequence
  kMamba2,            // Mamba-2 (Nemotron-H): constant state per sequence
  kMlpOnly,           // no token mixer, so no cache (Nemotron-H '-' and 'E' layers)
};
const char* LayerKindName(LayerKind k);

// True for kinds whose cache grows with the sequence (full, sliding, MLA).
bool IsAttentionKind(LayerKind k);
// True for kinds that keep a constant-size state per sequence.
bool IsStateKind(LayerKind k);

enum class MlpKind { kDense, kMoe, kNone };

struct LayerSpec {
  LayerKind kind = LayerKind::kFullAttention;
  MlpKind mlp = MlpKind::kDense;
  int64_t sliding_window = 0;  // tokens, for kSlidingAttention
};

struct AttentionDims {
  int64_t num_heads = 0;
  int64_t num_kv_heads = 0;
  int64_t head_dim = 0;
  bool bias = false;         // q/k/v/o biases (gpt-oss)
  bool qk_norm = false;      // per-head RMSNorm on q and k (Qwen3, Gemma 3)
  bool output_gate = false;  // q_proj also yields a sigmoid gate (Qwen3-Next, Qwen3.5)
  bool sinks = false;        // one learned sink logit per head (gpt-oss)
};

struct MlaDims {
  int64_t q_lora_rank = 0;  // 0: q is projected directly
  int64_t kv_lora_rank = 0;
  int64_t qk_nope_head_dim = 0;
  int64_t qk_rope_head_dim = 0;
  int64_t v_head_dim = 0;
};

struct LinearAttentionDims {  // Gated DeltaNet
  int64_t num_key_heads = 0;
  int64_t num_value_heads = 0;
  int64_t key_head_dim = 0;
  int64_t value_head_dim = 0;
  int64_t conv_kernel = 0;
};

struct MambaDims {
  int64_t d_inner = 0;    // expand * hidden (v1) or num_heads * head_dim (v2)
  int64_t d_state = 0;
  int64_t d_conv = 0;
  int64_t n_groups = 1;   // v2
  int64_t num_heads = 0;  // v2
  int64_t head_dim = 0;   // v2
  int64_t dt_rank = 0;    // v1
  bool conv_bias = true;
  bool proj_bias = false;
};

struct MoeDims {
  int64_t num_experts = 0;
  int64_t experts_per_token = 0;
  int64_t expert_intermediate = 0;
  int64_t shared_intermediate = 0;  // total width of the shared expert(s); 0 if none
  bool shared_gate = false;         // Qwen3-Next's sigmoid gate on the shared expert
  bool router_bias = false;
  bool expert_bias = false;
};

struct VisionDims {  // a ViT encoder shipped with a multimodal checkpoint
  int64_t hidden = 0, intermediate = 0, layers = 0, patch = 0, in_channels = 3, temporal_patch = 1;
  int64_t positions = 0;     // learned position embeddings
  int64_t merge = 1;         // spatial merge factor of the projector (Qwen)
  int64_t out_hidden = 0;    // text hidden size the projector maps to
};

// Rotary position embedding, as config.json's rope_theta and rope_scaling
// (or rope_parameters) describe it.
struct RopeSpec {
  std::string type = "default";  // default | linear | llama3 | yarn | dynamic ...
  double theta = 10000;
  double factor = 1;
  double partial_rotary_factor = 1;
  double low_freq_factor = 1, high_freq_factor = 4;  // llama3
  int64_t original_max_position_embeddings = 0;      // llama3, yarn
  double beta_fast = 32, beta_slow = 1;              // yarn
  double mscale = 0, mscale_all_dim = 0;             // yarn (DeepSeek)
  bool truncate = true;                              // yarn
};

// How the published checkpoint is quantized (config.json "quantization_config").
struct ConfigQuantization {
  std::string method;             // "fp8", "mxfp4", ... ; empty when none
  int64_t block = 0;              // fp8 weight_block_size (square), 0 if per-tensor/channel
  bool attention_excluded = false;  // modules_to_not_convert names self_attn (gpt-oss)
};

struct ModelSpec {
  std::string name;          // catalog name or the path it was read from
  std::string model_type;    // of the text model
  std::string architecture;  // architectures[0]
  int64_t hidden_size = 0;
  int64_t num_layers = 0;
  int64_t vocab_size = 0;
  int64_t intermediate_size = 0;
  int64_t max_position_embeddings = 0;
  int64_t norms_per_layer = 2;
  std::string hidden_act = "silu";  // the MLP's activation (hidden_act, or Gemma's hidden_activation)
  int64_t mtp_layers = 0;    // multi-token-prediction layers (not loaded without a draft)
  bool tie_word_embeddings = false;
  DType dtype = DType::kBFloat16;
  std::optional<DType> ssm_state_dtype;  // config's mamba_ssm_dtype, when given

  AttentionDims attn;
  MlaDims mla;
  LinearAttentionDims linear;
  MambaDims mamba;
  MoeDims moe;
  std::optional<VisionDims> vision;
  ConfigQuantization quant;
  RopeSpec rope;
  double rms_norm_eps = 1e-6;
  double initializer_range = 0.02;
  std::vector<int32_t> eos_token_ids;
  std::vector<LayerSpec> layers;

  int64_t CountLayers(LayerKind k) const;
  // The decoder layer a drafter adds (EAGLE's full attention with a dense MLP
  // shaped like the model's, DeepSeek's MTP layer with MLA and routed
  // experts): the last attention layer's kind (sliding made full) and MLP.
  // Empty when the model has no attention layer to copy.
  std::optional<LayerSpec> DraftLayer() const;
  bool IsMoe() const { return moe.num_experts > 0; }
};

// Reads a config.json document. Nested "text_config" (multimodal checkpoints)
// is the language model; sparse configs (Gemma 3) take transformers' defaults.
// Errors name the missing or malformed field.
Result<ModelSpec> ParseModelConfig(const boost::json::value& config, const std::string& name);

// Reads and parses a config.json file (or a directory holding one).
Result<ModelSpec> LoadModelConfig(const std::string& path);

}  // namespace goodput
