#include "model/model_spec.h"

#include <algorithm>
#include <fstream>

#include <boost/json.hpp>
#include <fmt/format.h>

#include "core/json_file.h"
#include "model/config_fields.h"

namespace goodput {
namespace json = boost::json;

const char* LayerKindName(LayerKind k) {
  switch (k) {
    case LayerKind::kFullAttention: return "full attention";
    case LayerKind::kSlidingAttention: return "sliding window";
    case LayerKind::kMla: return "MLA";
    case LayerKind::kLinearAttention: return "gated deltanet";
    case LayerKind::kMamba: return "mamba";
    case LayerKind::kMamba2: return "mamba2";
    case LayerKind::kMlpOnly: return "mlp only";
  }
  return "?";
}

bool IsAttentionKind(LayerKind k) {
  return k == LayerKind::kFullAttention || k == LayerKind::kSlidingAttention || k == LayerKind::kMla;
}

bool IsStateKind(LayerKind k) {
  return k == LayerKind::kLinearAttention || k == LayerKind::kMamba || k == LayerKind::kMamba2;
}

int64_t ModelSpec::CountLayers(LayerKind k) const {
  int64_t n = 0;
  for (const auto& l : layers) n += l.kind == k;
  return n;
}

std::optional<LayerSpec> ModelSpec::DraftLayer() const {
  const auto last =
      std::find_if(layers.rbegin(), layers.rend(), [](const LayerSpec& l) { return IsAttentionKind(l.kind); });
  if (last == layers.rend()) return std::nullopt;
  return LayerSpec{last->kind == LayerKind::kMla ? LayerKind::kMla : LayerKind::kFullAttention, last->mlp, 0};
}

namespace {

// transformers' Gemma3TextConfig defaults: the published Gemma 3 configs leave
// these out.
void ApplyGemma3Defaults(json::object& text) {
  const std::pair<const char*, json::value> defaults[] = {
      {"vocab_size", 262208},       {"hidden_size", 2304},          {"intermediate_size", 9216},
      {"num_hidden_layers", 26},    {"num_attention_heads", 8},     {"num_key_value_heads", 4},
      {"head_dim", 256},            {"max_position_embeddings", 131072}, {"sliding_window", 4096},
      {"sliding_window_pattern", 6},
  };
  for (const auto& [key, value] : defaults) {
    if (!text.contains(key)) text[key] = value;
  }
}

Result<AttentionDims> ParseAttention(const ConfigFields& f, int64_t hidden) {
  AttentionDims a;
  GOODPUT_ASSIGN_OR_RETURN(a.num_heads, f.Int("num_attention_heads"));
  if (a.num_heads == 0) return Status::InvalidArgument(f.where() + ": \"num_attention_heads\" must be positive");
  GOODPUT_ASSIGN_OR_RETURN(a.num_kv_heads, f.Int("num_key_value_heads", a.num_heads));
  if (a.num_kv_heads == 0) return Status::InvalidArgument(f.where() + ": \"num_key_value_heads\" must be positive");
  GOODPUT_ASSIGN_OR_RETURN(a.head_dim, f.Int("head_dim", hidden / a.num_heads));
  GOODPUT_ASSIGN_OR_RETURN(a.bias, f.Bool("attention_bias", false));
  return a;
}

Result<MlaDims> ParseMla(const ConfigFields& f) {
  MlaDims m;
  GOODPUT_ASSIGN_OR_RETURN(m.q_lora_rank, f.Int("q_lora_rank", 0));
  GOODPUT_ASSIGN_OR_RETURN(m.kv_lora_rank, f.Int("kv_lora_rank"));
  GOODPUT_ASSIGN_OR_RETURN(m.qk_nope_head_dim, f.Int("qk_nope_head_dim"));
  GOODPUT_ASSIGN_OR_RETURN(m.qk_rope_head_dim, f.Int("qk_rope_head_dim"));
  GOODPUT_ASSIGN_OR_RETURN(m.v_head_dim, f.Int("v_head_dim"));
  return m;
}

Result<LinearAttentionDims> ParseLinear(const ConfigFields& f) {
  LinearAttentionDims l;
  GOODPUT_ASSIGN_OR_RETURN(l.num_key_heads, f.Int("linear_num_key_heads"));
  GOODPUT_ASSIGN_OR_RETURN(l.num_value_heads, f.Int("linear_num_value_heads"));
  GOODPUT_ASSIGN_OR_RETURN(l.key_head_dim, f.Int("linear_key_head_dim"));
  GOODPUT_ASSIGN_OR_RETURN(l.value_head_dim, f.Int("linear_value_head_dim"));
  GOODPUT_ASSIGN_OR_RETURN(l.conv_kernel, f.Int("linear_conv_kernel_dim"));
  return l;
}

// Jamba's Mamba-1 mixer.
Result<MambaDims> ParseMamba1(const ConfigFields& f, int64_t hidden) {
  MambaDims m;
  GOODPUT_ASSIGN_OR_RETURN(m.d_state, f.Int("mamba_d_state", 16));
  GOODPUT_ASSIGN_OR_RETURN(m.d_conv, f.Int("mamba_d_conv", 4));
  GOODPUT_ASSIGN_OR_RETURN(int64_t expand, f.Int("mamba_expand", 2));
  m.d_inner = expand * hidden;
  const auto dt = f.object().find("mamba_dt_rank");
  if (dt != f.object().end() && dt->value().is_string() && dt->value().as_string() == "auto") {
    m.dt_rank = (hidden + 15) / 16;
  } else {
    GOODPUT_ASSIGN_OR_RETURN(m.dt_rank, f.Int("mamba_dt_rank", (hidden + 15) / 16));
  }
  GOODPUT_ASSIGN_OR_RETURN(m.conv_bias, f.Bool("mamba_conv_bias", true));
  GOODPUT_ASSIGN_OR_RETURN(m.proj_bias, f.Bool("mamba_proj_bias", false));
  return m;
}

// Nemotron-H's Mamba-2 mixer.
Result<MambaDims> ParseMamba2(const ConfigFields& f) {
  MambaDims m;
  GOODPUT_ASSIGN_OR_RETURN(m.num_heads, f.Int("mamba_num_heads"));
  GOODPUT_ASSIGN_OR_RETURN(m.head_dim, f.Int("mamba_head_dim"));
  GOODPUT_ASSIGN_OR_RETURN(m.d_state, f.Int("ssm_state_size"));
  GOODPUT_ASSIGN_OR_RETURN(m.d_conv, f.Int("conv_kernel", 4));
  GOODPUT_ASSIGN_OR_RETURN(m.n_groups, f.Int("n_groups", 1));
  GOODPUT_ASSIGN_OR_RETURN(m.conv_bias, f.Bool("use_conv_bias", true));
  GOODPUT_ASSIGN_OR_RETURN(m.proj_bias, f.Bool("use_bias", false));
  m.d_inner = m.num_heads * m.head_dim;
  return m;
}

Result<LayerKind> KindFromTypeName(const std::string& t, const std::string& where) {
  if (t == "full_attention" || t == "attention") return LayerKind::kFullAttention;
  if (t == "sliding_attention") return LayerKind::kSlidingAttention;
  if (t == "linear_attention") return LayerKind::kLinearAttention;
  if (t == "mamba") return LayerKind::kMamba;
  return Status::InvalidArgument(fmt::format("{}: unknown layer type \"{}\"", where, t));
}

Result<std::vector<LayerKind>> KindsFromList(const ConfigFields& f, const char* key, int64_t n) {
  GOODPUT_ASSIGN_OR_RETURN(std::vector<std::string> types, f.StringList(key));
  if (static_cast<int64_t>(types.size()) != n) {
    return Status::InvalidArgument(fmt::format("{}: \"{}\" lists {} layers but num_hidden_layers is {}",
                                               f.where(), key, types.size(), n));
  }
  std::vector<LayerKind> kinds;
  for (const auto& t : types) {
    GOODPUT_ASSIGN_OR_RETURN(LayerKind k, KindFromTypeName(t, f.where() + " " + key));
    kinds.push_back(k);
  }
  return kinds;
}

Result<std::vector<LayerKind>> NemotronKinds(const ConfigFields& f, int64_t n) {
  GOODPUT_ASSIGN_OR_RETURN(std::string pattern, f.String("hybrid_override_pattern"));
  if (static_cast<int64_t>(pattern.size()) != n) {
    return Status::InvalidArgument(fmt::format(
        "{}: \"hybrid_override_pattern\" has {} layers but num_hidden_layers is {}", f.where(), pattern.size(), n));
  }
  std::vector<LayerKind> kinds;
  for (char c : pattern) {
    if (c == 'M') kinds.push_back(LayerKind::kMamba2);
    else if (c == '*') kinds.push_back(LayerKind::kFullAttention);
    else if (c == '-' || c == 'E') kinds.push_back(LayerKind::kMlpOnly);
    else
      return Status::InvalidArgument(
          fmt::format("{}: \"hybrid_override_pattern\" has unknown symbol '{}'", f.where(), c));
  }
  return kinds;
}

// Each layer's token mixer, from whichever field this model family uses.
Result<std::vector<LayerKind>> LayerKinds(const ConfigFields& f, const std::string& type, int64_t n) {
  if (type == "nemotron_h") return NemotronKinds(f, n);
  if (f.HasValue("layer_types")) return KindsFromList(f, "layer_types", n);
  if (type == "jamba" && f.HasValue("layers_block_type")) return KindsFromList(f, "layers_block_type", n);
  std::vector<LayerKind> kinds(static_cast<size_t>(n), LayerKind::kFullAttention);
  if (type.rfind("deepseek", 0) == 0) {
    kinds.assign(kinds.size(), LayerKind::kMla);
  } else if (type == "gemma3_text" || type == "gemma3" || type == "gemma2") {
    GOODPUT_ASSIGN_OR_RETURN(int64_t pattern, f.Int("sliding_window_pattern", type == "gemma2" ? 2 : 6));
    if (pattern == 0) return Status::InvalidArgument(f.where() + ": \"sliding_window_pattern\" must be positive");
    for (int64_t i = 0; i < n; ++i) {
      if ((i + 1) % pattern != 0) kinds[i] = LayerKind::kSlidingAttention;
    }
  } else if (type == "qwen3_next") {
    GOODPUT_ASSIGN_OR_RETURN(int64_t interval, f.Int("full_attention_interval"));
    if (interval == 0) return Status::InvalidArgument(f.where() + ": \"full_attention_interval\" must be positive");
    for (int64_t i = 0; i < n; ++i) {
      if ((i + 1) % interval != 0) kinds[i] = LayerKind::kLinearAttention;
    }
  } else if (type == "jamba") {
    GOODPUT_ASSIGN_OR_RETURN(int64_t period, f.Int("attn_layer_period"));
    GOODPUT_ASSIGN_OR_RETURN(int64_t offset, f.Int("attn_layer_offset"));
    if (period == 0) return Status::InvalidArgument(f.where() + ": \"attn_layer_period\" must be positive");
    for (int64_t i = 0; i < n; ++i) {
      if (i % period != offset) kinds[i] = LayerKind::kMamba;
    }
  } else if (f.HasValue("sliding_window")) {
    GOODPUT_ASSIGN_OR_RETURN(bool use, f.Bool("use_sliding_window", true));
    if (use) kinds.assign(kinds.size(), LayerKind::kSlidingAttention);
  }
  return kinds;
}

Result<std::vector<int64_t>> IntList(const ConfigFields& f, const char* key) {
  std::vector<int64_t> out;
  if (!f.HasValue(key)) return out;
  const auto& v = f.object().at(key);
  if (!v.is_array()) return Status::InvalidArgument(fmt::format("{}: \"{}\" must be a list", f.where(), key));
  for (const auto& e : v.as_array()) {
    if (!e.is_int64()) return Status::InvalidArgument(fmt::format("{}: \"{}\" must list integers", f.where(), key));
    out.push_back(e.as_int64());
  }
  return out;
}

// Whether layer i's feed-forward is a mixture of experts.
Result<std::vector<bool>> MoeLayers(const ConfigFields& f, const std::string& type, int64_t n) {
  std::vector<bool> moe(static_cast<size_t>(n), true);
  if (type.rfind("deepseek", 0) == 0) {
    GOODPUT_ASSIGN_OR_RETURN(int64_t first_dense, f.Int("first_k_dense_replace", 0));
    GOODPUT_ASSIGN_OR_RETURN(int64_t freq, f.Int("moe_layer_freq", 1));
    for (int64_t i = 0; i < n; ++i) moe[i] = i >= first_dense && (freq == 0 || i % freq == 0);
  } else if (type == "jamba") {
    GOODPUT_ASSIGN_OR_RETURN(int64_t period, f.Int("expert_layer_period", 1));
    GOODPUT_ASSIGN_OR_RETURN(int64_t offset, f.Int("expert_layer_offset", 0));
    for (int64_t i = 0; i < n; ++i) moe[i] = period > 0 && i % period == offset;
  } else {
    GOODPUT_ASSIGN_OR_RETURN(int64_t step, f.Int("decoder_sparse_step", 1));
    GOODPUT_ASSIGN_OR_RETURN(std::vector<int64_t> dense_only, IntList(f, "mlp_only_layers"));
    for (int64_t i = 0; i < n; ++i) moe[i] = step > 0 && (i + 1) % step == 0;
    for (int64_t i : dense_only) {
      if (i >= 0 && i < n) moe[i] = false;
    }
  }
  return moe;
}

Result<MoeDims> ParseMoe(const ConfigFields& f, const std::string& type, int64_t intermediate) {
  MoeDims m;
  for (const char* key : {"num_local_experts", "n_routed_experts", "num_experts"}) {
    if (f.HasValue(key)) {
      GOODPUT_ASSIGN_OR_RETURN(m.num_experts, f.Int(key));
      break;
    }
  }
  if (m.num_experts == 0) return m;
  const char* k_key = f.HasValue("num_experts_per_tok") ? "num_experts_per_tok" : "experts_per_token";
  GOODPUT_ASSIGN_OR_RETURN(m.experts_per_token, f.Int(k_key));
  GOODPUT_ASSIGN_OR_RETURN(m.expert_intermediate, f.Int("moe_intermediate_size", intermediate));
  GOODPUT_ASSIGN_OR_RETURN(int64_t n_shared, f.Int("n_shared_experts", 0));
  GOODPUT_ASSIGN_OR_RETURN(int64_t per_shared, f.Int("moe_shared_expert_intermediate_size", m.expert_intermediate));
  GOODPUT_ASSIGN_OR_RETURN(int64_t shared_width, f.Int("shared_expert_intermediate_size", 0));
  m.shared_intermediate = n_shared * per_shared + shared_width;
  m.shared_gate = type == "qwen3_next" && shared_width > 0;
  m.router_bias = type == "gpt_oss" || type.rfind("deepseek_v3", 0) == 0;
  m.expert_bias = type == "gpt_oss";
  return m;
}

Result<std::optional<VisionDims>> ParseVision(const json::object& top, int64_t text_hidden) {
  auto it = top.find("vision_config");
  if (it == top.end() || !it->value().is_object()) return std::optional<VisionDims>();
  ConfigFields f(it->value().as_object(), "config.json vision_config");
  VisionDims v;
  GOODPUT_ASSIGN_OR_RETURN(v.hidden, f.Int("hidden_size"));
  GOODPUT_ASSIGN_OR_RETURN(v.intermediate, f.Int("intermediate_size"));
  GOODPUT_ASSIGN_OR_RETURN(v.layers, f.Int(f.HasValue("depth") ? "depth" : "num_hidden_layers"));
  GOODPUT_ASSIGN_OR_RETURN(v.patch, f.Int("patch_size"));
  GOODPUT_ASSIGN_OR_RETURN(v.in_channels, f.Int("in_channels", 3));
  GOODPUT_ASSIGN_OR_RETURN(v.temporal_patch, f.Int("temporal_patch_size", 1));
  GOODPUT_ASSIGN_OR_RETURN(v.merge, f.Int("spatial_merge_size", 1));
  GOODPUT_ASSIGN_OR_RETURN(v.out_hidden, f.Int("out_hidden_size", text_hidden));
  if (f.HasValue("num_position_embeddings")) {
    GOODPUT_ASSIGN_OR_RETURN(v.positions, f.Int("num_position_embeddings"));
  } else {
    GOODPUT_ASSIGN_OR_RETURN(int64_t image, f.Int("image_size", 0));
    if (v.patch > 0) v.positions = (image / v.patch) * (image / v.patch);
  }
  return std::optional<VisionDims>(v);
}

ConfigQuantization ParseQuantization(const json::object& top) {
  ConfigQuantization q;
  auto it = top.find("quantization_config");
  if (it == top.end() || !it->value().is_object()) return q;
  const auto& obj = it->value().as_object();
  if (auto m = obj.find("quant_method"); m != obj.end() && m->value().is_string()) {
    q.method = std::string(m->value().as_string());
  }
  if (auto b = obj.find("weight_block_size"); b != obj.end() && b->value().is_array() &&
                                               !b->value().as_array().empty() &&
                                               b->value().as_array()[0].is_int64()) {
    q.block = b->value().as_array()[0].as_int64();
  }
  if (auto m = obj.find("modules_to_not_convert"); m != obj.end() && m->value().is_array()) {
    for (const auto& e : m->value().as_array()) {
      if (e.is_string() && std::string_view(e.as_string()).find("self_attn") != std::string_view::npos) {
        q.attention_excluded = true;
      }
    }
  }
  return q;
}

// Fills the per-mixer dimensions that the model's layer kinds need.
Status ParseMixers(const ConfigFields& f, ModelSpec& m) {
  auto has = [&](LayerKind k) { return m.CountLayers(k) > 0; };
  if (has(LayerKind::kFullAttention) || has(LayerKind::kSlidingAttention) || has(LayerKind::kMla)) {
    GOODPUT_ASSIGN_OR_RETURN(m.attn, ParseAttention(f, m.hidden_size));
  }
  if (has(LayerKind::kMla)) {
    GOODPUT_ASSIGN_OR_RETURN(m.mla, ParseMla(f));
  }
  if (has(LayerKind::kLinearAttention)) {
    GOODPUT_ASSIGN_OR_RETURN(m.linear, ParseLinear(f));
  }
  if (has(LayerKind::kMamba)) {
    GOODPUT_ASSIGN_OR_RETURN(m.mamba, ParseMamba1(f, m.hidden_size));
  }
  if (has(LayerKind::kMamba2)) {
    GOODPUT_ASSIGN_OR_RETURN(m.mamba, ParseMamba2(f));
  }
  const std::string& t = m.model_type;
  m.attn.qk_norm = t == "qwen3" || t == "qwen3_moe" || t == "qwen3_next" || t == "qwen3_5_text" ||
                   t == "gemma3_text";
  m.attn.sinks = t == "gpt_oss";
  // Qwen3-Next's attention gates its output; Qwen3.5 says so with attn_output_gate.
  GOODPUT_ASSIGN_OR_RETURN(m.attn.output_gate, f.Bool("attn_output_gate", t == "qwen3_next"));
  if (has(LayerKind::kSlidingAttention)) {
    GOODPUT_ASSIGN_OR_RETURN(int64_t window, f.Int("sliding_window"));
    if (window == 0) return Status::InvalidArgument(f.where() + ": \"sliding_window\" must be positive");
    for (auto& l : m.layers) {
      if (l.kind == LayerKind::kSlidingAttention) l.sliding_window = window;
    }
  }
  return Status::Ok();
}

Status ParseLayers(const ConfigFields& f, ModelSpec& m) {
  GOODPUT_ASSIGN_OR_RETURN(std::vector<LayerKind> kinds, LayerKinds(f, m.model_type, m.num_layers));
  GOODPUT_ASSIGN_OR_RETURN(m.moe, ParseMoe(f, m.model_type, m.intermediate_size));
  std::vector<bool> moe(kinds.size(), false);
  if (m.IsMoe()) {
    GOODPUT_ASSIGN_OR_RETURN(moe, MoeLayers(f, m.model_type, m.num_layers));
  }
  std::string pattern;
  if (m.model_type == "nemotron_h") {
    GOODPUT_ASSIGN_OR_RETURN(pattern, f.String("hybrid_override_pattern"));
  }
  m.layers.resize(kinds.size());
  for (size_t i = 0; i < kinds.size(); ++i) {
    m.layers[i].kind = kinds[i];
    m.layers[i].mlp = moe[i] ? MlpKind::kMoe : MlpKind::kDense;
    if (!pattern.empty()) {  // Nemotron-H: each layer is one block (mixer or MLP)
      m.layers[i].mlp = pattern[i] == 'E' ? MlpKind::kMoe : pattern[i] == '-' ? MlpKind::kDense : MlpKind::kNone;
    }
  }
  return ParseMixers(f, m);
}

Result<DType> ConfigDType(const ConfigFields& top, const ConfigFields& text) {
  for (const ConfigFields* f : {&text, &top}) {
    for (const char* key : {"torch_dtype", "dtype"}) {
      if (f->HasValue(key)) {
        GOODPUT_ASSIGN_OR_RETURN(std::string name, f->String(key));
        return ParseDType(name);
      }
    }
  }
  return DType::kBFloat16;  // what vLLM's "auto" picks for a config without a dtype
}

Result<RopeSpec> ParseRope(const ConfigFields& f) {
  RopeSpec r;
  GOODPUT_ASSIGN_OR_RETURN(r.theta, f.Number("rope_theta", 10000.0));
  GOODPUT_ASSIGN_OR_RETURN(r.partial_rotary_factor, f.Number("partial_rotary_factor", 1.0));
  const char* key = f.HasValue("rope_scaling")      ? "rope_scaling"
                    : f.HasValue("rope_parameters") ? "rope_parameters"
                                                    : nullptr;
  if (!key) return r;
  const auto& v = f.object().at(key);
  if (!v.is_object()) return Status::InvalidArgument(fmt::format("{}: \"{}\" must be an object", f.where(), key));
  ConfigFields s(v.as_object(), f.where() + " " + key);
  GOODPUT_ASSIGN_OR_RETURN(r.type, s.String(s.HasValue("rope_type") ? "rope_type" : "type", std::string("default")));
  GOODPUT_ASSIGN_OR_RETURN(r.theta, s.Number("rope_theta", r.theta));
  GOODPUT_ASSIGN_OR_RETURN(r.partial_rotary_factor, s.Number("partial_rotary_factor", r.partial_rotary_factor));
  GOODPUT_ASSIGN_OR_RETURN(r.factor, s.Number("factor", 1.0));
  GOODPUT_ASSIGN_OR_RETURN(r.low_freq_factor, s.Number("low_freq_factor", 1.0));
  GOODPUT_ASSIGN_OR_RETURN(r.high_freq_factor, s.Number("high_freq_factor", 4.0));
  GOODPUT_ASSIGN_OR_RETURN(r.original_max_position_embeddings, s.Int("original_max_position_embeddings", 0));
  GOODPUT_ASSIGN_OR_RETURN(r.beta_fast, s.Number("beta_fast", 32.0));
  GOODPUT_ASSIGN_OR_RETURN(r.beta_slow, s.Number("beta_slow", 1.0));
  GOODPUT_ASSIGN_OR_RETURN(r.mscale, s.Number("mscale", 0.0));
  GOODPUT_ASSIGN_OR_RETURN(r.mscale_all_dim, s.Number("mscale_all_dim", 0.0));
  GOODPUT_ASSIGN_OR_RETURN(r.truncate, s.Bool("truncate", true));
  if (!(r.factor > 0) || !(r.theta > 0))
    return Status::InvalidArgument(f.where() + ": rope factor and theta must be positive");
  return r;
}

// eos_token_id: a number or a list, at the top or in text_config.
std::vector<int32_t> EosTokens(const ConfigFields& top, const ConfigFields& f) {
  std::vector<int32_t> out;
  for (const ConfigFields* c : {&f, &top}) {
    auto it = c->object().find("eos_token_id");
    if (it == c->object().end()) continue;
    if (it->value().is_int64()) out.push_back(static_cast<int32_t>(it->value().as_int64()));
    if (it->value().is_array()) {
      for (const auto& e : it->value().as_array()) {
        if (e.is_int64()) out.push_back(static_cast<int32_t>(e.as_int64()));
      }
    }
    if (!out.empty()) break;
  }
  return out;
}

Status ParseScalars(const ConfigFields& top, const ConfigFields& f, ModelSpec& m) {
  GOODPUT_ASSIGN_OR_RETURN(m.hidden_size, f.Int("hidden_size"));
  GOODPUT_ASSIGN_OR_RETURN(m.num_layers, f.Int("num_hidden_layers"));
  GOODPUT_ASSIGN_OR_RETURN(m.vocab_size, f.Int("vocab_size"));
  GOODPUT_ASSIGN_OR_RETURN(m.intermediate_size, f.Int("intermediate_size", 0));
  GOODPUT_ASSIGN_OR_RETURN(m.max_position_embeddings, f.Int("max_position_embeddings"));
  if (m.hidden_size == 0 || m.num_layers == 0 || m.vocab_size == 0 || m.max_position_embeddings == 0) {
    return Status::InvalidArgument(f.where() + ": hidden_size, num_hidden_layers, vocab_size and "
                                               "max_position_embeddings must be positive");
  }
  // Far beyond any published model, and small enough that parameter counts
  // cannot overflow: a typo (vocab_size 1e12) is refused, not allocated.
  if (m.hidden_size > (1 << 20) || m.intermediate_size > (1 << 22) || m.num_layers > 4096 ||
      m.vocab_size > (1 << 24) || m.max_position_embeddings > (int64_t{1} << 32)) {
    return Status::InvalidArgument(f.where() + ": a size beyond any model's (limits: hidden_size 1048576, "
                                               "intermediate_size 4194304, num_hidden_layers 4096, vocab_size "
                                               "16777216, max_position_embeddings 2^32)");
  }
  // The tie flag lives at the top of multimodal configs; transformers defaults it to true.
  const bool tie_default = m.model_type == "gemma3_text" || m.model_type == "gemma2";
  GOODPUT_ASSIGN_OR_RETURN(bool top_tie, top.Bool("tie_word_embeddings", tie_default));
  GOODPUT_ASSIGN_OR_RETURN(m.tie_word_embeddings, f.Bool("tie_word_embeddings", top_tie));
  GOODPUT_ASSIGN_OR_RETURN(m.dtype, ConfigDType(top, f));
  if (f.HasValue("mamba_ssm_dtype")) {
    GOODPUT_ASSIGN_OR_RETURN(std::string ssm, f.String("mamba_ssm_dtype"));
    GOODPUT_ASSIGN_OR_RETURN(m.ssm_state_dtype, ParseDType(ssm));
  }
  GOODPUT_ASSIGN_OR_RETURN(m.rope, ParseRope(f));
  GOODPUT_ASSIGN_OR_RETURN(m.rms_norm_eps, f.Number("rms_norm_eps", 1e-6));
  GOODPUT_ASSIGN_OR_RETURN(m.initializer_range, f.Number("initializer_range", 0.02));
  m.eos_token_ids = EosTokens(top, f);
  GOODPUT_ASSIGN_OR_RETURN(m.hidden_act, f.String(f.HasValue("hidden_activation") ? "hidden_activation" : "hidden_act",
                                                  m.model_type.rfind("gemma", 0) == 0 ? "gelu_pytorch_tanh" : "silu"));
  m.norms_per_layer = m.model_type == "gemma3_text" || m.model_type == "gemma2" ? 4 : 2;
  if (m.model_type == "nemotron_h") m.norms_per_layer = 1;
  GOODPUT_ASSIGN_OR_RETURN(int64_t nextn, f.Int("num_nextn_predict_layers", 0));
  GOODPUT_ASSIGN_OR_RETURN(int64_t mtp, f.Int("mtp_num_hidden_layers", 0));
  m.mtp_layers = nextn + mtp;
  return Status::Ok();
}

}  // namespace

Result<ModelSpec> ParseModelConfig(const json::value& config, const std::string& name) {
  if (!config.is_object()) return Status::InvalidArgument(name + ": config.json is not a JSON object");
  const json::object& top_obj = config.as_object();
  json::object text_obj = top_obj;
  std::string where = "config.json";
  if (auto it = top_obj.find("text_config"); it != top_obj.end()) {
    if (!it->value().is_object()) return Status::InvalidArgument("config.json: \"text_config\" must be an object");
    text_obj = it->value().as_object();
    where = "config.json text_config";
  }
  ModelSpec m;
  m.name = name;
  ConfigFields top(top_obj, "config.json");
  GOODPUT_ASSIGN_OR_RETURN(std::string top_type, top.String("model_type"));
  m.model_type = top_type;
  if (auto it = text_obj.find("model_type"); it != text_obj.end() && it->value().is_string()) {
    m.model_type = std::string(it->value().as_string());
  }
  if (m.model_type == "gemma3") m.model_type = "gemma3_text";
  if (m.model_type == "gemma3_text") ApplyGemma3Defaults(text_obj);
  if (auto archs = top.StringList("architectures"); archs.ok() && !archs->empty()) m.architecture = archs->front();
  ConfigFields f(text_obj, where);
  GOODPUT_RETURN_IF_ERROR(ParseScalars(top, f, m));
  GOODPUT_RETURN_IF_ERROR(ParseLayers(f, m));
  m.quant = ParseQuantization(top_obj);
  GOODPUT_ASSIGN_OR_RETURN(m.vision, ParseVision(top_obj, m.hidden_size));
  return m;
}

Result<ModelSpec> LoadModelConfig(const std::string& path) {
  std::string file = path;
  if (std::ifstream probe(path + "/config.json"); probe.good()) file = path + "/config.json";
  GOODPUT_ASSIGN_OR_RETURN(json::value v, ReadJsonFile(file, "model config"));
  auto spec = ParseModelConfig(v, path);
  if (!spec.ok()) return spec.status().WithContext(file);
  return spec;
}

}  // namespace goodput
