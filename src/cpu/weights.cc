#include "cpu/weights.h"

#include <random>

#include <fmt/format.h>

#include "cpu/safetensors.h"

namespace goodput::cpu {
namespace {

uint64_t Fnv1a(const std::string& s, uint64_t seed) {
  uint64_t h = 1469598103934665603ULL ^ seed;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  return h;
}

std::vector<float> Normal(const std::string& name, int64_t n, double sd, uint64_t seed) {
  std::mt19937_64 rng(Fnv1a(name, seed));
  std::normal_distribution<float> dist(0.0f, static_cast<float>(sd));
  std::vector<float> v(static_cast<size_t>(n));
  for (auto& x : v) x = dist(rng);
  return v;
}

struct Dims {
  int64_t h, q, kv, inter, vocab;
};

Dims DimsOf(const ModelSpec& m) {
  return Dims{m.hidden_size, m.attn.num_heads * m.attn.head_dim, m.attn.num_kv_heads * m.attn.head_dim,
              m.intermediate_size, m.vocab_size};
}

}  // namespace

int64_t ModelWeights::Bytes() const {
  int64_t n = static_cast<int64_t>(embed.size() + final_norm.size() + lm_head.size());
  for (const auto& l : layers) {
    n += static_cast<int64_t>(l.attn_norm.size() + l.wqkv.size() + l.wo.size() + l.mlp_norm.size() +
                              l.w_gate_up.size() + l.w_down.size());
  }
  return n * 4;
}

Status CheckCpuSupported(const ModelSpec& m) {
  for (const auto& l : m.layers) {
    if (l.kind != LayerKind::kFullAttention && l.kind != LayerKind::kSlidingAttention) {
      return Status::InvalidArgument(fmt::format("{}: the CPU runner handles full and sliding-window attention "
                                                 "layers only, not {}", m.name, LayerKindName(l.kind)));
    }
    if (l.mlp != MlpKind::kDense) return Status::InvalidArgument(m.name + ": the CPU runner has no mixture-of-experts");
  }
  if (m.attn.bias || m.attn.qk_norm || m.attn.output_gate || m.attn.sinks) {
    return Status::InvalidArgument(m.name + ": attention biases, q/k norms, output gates and sinks are not supported");
  }
  if (m.attn.num_heads % m.attn.num_kv_heads != 0)
    return Status::InvalidArgument(m.name + ": heads must be a multiple of KV heads");
  if (m.intermediate_size <= 0) return Status::InvalidArgument(m.name + ": intermediate_size is missing");
  // The runner is Llama's: a SiLU-gated MLP, two RMS norms per layer, embeddings unscaled.
  if (m.hidden_act != "silu" && m.hidden_act != "swish") {
    return Status::InvalidArgument(
        fmt::format("{}: the CPU runner implements the SiLU activation only, not '{}'", m.name, m.hidden_act));
  }
  if (m.norms_per_layer != 2 || m.model_type.rfind("gemma", 0) == 0) {
    return Status::InvalidArgument(fmt::format("{}: the CPU runner implements Llama-style layers, not {} ({})", m.name,
                                               m.model_type, m.architecture));
  }
  return Status::Ok();
}

ModelWeights DummyWeights(const ModelSpec& m, uint64_t seed) {
  const Dims d = DimsOf(m);
  const double sd = m.initializer_range;
  ModelWeights w;
  w.embed = Normal("model.embed_tokens.weight", d.vocab * d.h, sd, seed);
  w.final_norm.assign(static_cast<size_t>(d.h), 1.0f);
  if (!m.tie_word_embeddings) w.lm_head = Normal("lm_head.weight", d.vocab * d.h, sd, seed);
  for (int64_t i = 0; i < m.num_layers; ++i) {
    const std::string p = fmt::format("model.layers.{}.", i);
    LayerWeights l;
    l.attn_norm.assign(static_cast<size_t>(d.h), 1.0f);
    l.mlp_norm.assign(static_cast<size_t>(d.h), 1.0f);
    l.wqkv = Normal(p + "self_attn.qkv_proj.weight", (d.q + 2 * d.kv) * d.h, sd, seed);
    l.wo = Normal(p + "self_attn.o_proj.weight", d.h * d.q, sd, seed);
    l.w_gate_up = Normal(p + "mlp.gate_up_proj.weight", 2 * d.inter * d.h, sd, seed);
    l.w_down = Normal(p + "mlp.down_proj.weight", d.h * d.inter, sd, seed);
    w.layers.push_back(std::move(l));
  }
  return w;
}

namespace {

using Tensors = std::map<std::string, Tensor>;

// Moves tensor `name` of shape [rows, cols] to the end of `out`.
Status Take(Tensors& t, const std::string& name, int64_t rows, int64_t cols, std::vector<float>& out) {
  auto it = t.find(name);
  if (it == t.end()) return Status::InvalidArgument(fmt::format("checkpoint lacks tensor '{}'", name));
  const auto& shape = it->second.shape;
  const bool ok = cols == 0 ? shape == std::vector<int64_t>{rows} : shape == std::vector<int64_t>{rows, cols};
  if (!ok) {
    return Status::InvalidArgument(fmt::format("tensor '{}' has shape [{}], expected [{}{}]", name,
                                               fmt::join(shape, ", "), rows, cols ? fmt::format(", {}", cols) : ""));
  }
  out.insert(out.end(), it->second.data.begin(), it->second.data.end());
  t.erase(it);
  return Status::Ok();
}

}  // namespace

Result<ModelWeights> LoadSafetensorsWeights(const ModelSpec& m, const std::string& dir) {
  GOODPUT_ASSIGN_OR_RETURN(Tensors t, ReadSafetensorsDir(dir));
  const Dims d = DimsOf(m);
  ModelWeights w;
  GOODPUT_RETURN_IF_ERROR(Take(t, "model.embed_tokens.weight", d.vocab, d.h, w.embed));
  GOODPUT_RETURN_IF_ERROR(Take(t, "model.norm.weight", d.h, 0, w.final_norm));
  if (!m.tie_word_embeddings) GOODPUT_RETURN_IF_ERROR(Take(t, "lm_head.weight", d.vocab, d.h, w.lm_head));
  for (int64_t i = 0; i < m.num_layers; ++i) {
    const std::string p = fmt::format("model.layers.{}.", i);
    LayerWeights l;
    GOODPUT_RETURN_IF_ERROR(Take(t, p + "input_layernorm.weight", d.h, 0, l.attn_norm));
    GOODPUT_RETURN_IF_ERROR(Take(t, p + "self_attn.q_proj.weight", d.q, d.h, l.wqkv));
    GOODPUT_RETURN_IF_ERROR(Take(t, p + "self_attn.k_proj.weight", d.kv, d.h, l.wqkv));
    GOODPUT_RETURN_IF_ERROR(Take(t, p + "self_attn.v_proj.weight", d.kv, d.h, l.wqkv));
    GOODPUT_RETURN_IF_ERROR(Take(t, p + "self_attn.o_proj.weight", d.h, d.q, l.wo));
    GOODPUT_RETURN_IF_ERROR(Take(t, p + "post_attention_layernorm.weight", d.h, 0, l.mlp_norm));
    GOODPUT_RETURN_IF_ERROR(Take(t, p + "mlp.gate_proj.weight", d.inter, d.h, l.w_gate_up));
    GOODPUT_RETURN_IF_ERROR(Take(t, p + "mlp.up_proj.weight", d.inter, d.h, l.w_gate_up));
    GOODPUT_RETURN_IF_ERROR(Take(t, p + "mlp.down_proj.weight", d.h, d.inter, l.w_down));
    w.layers.push_back(std::move(l));
  }
  return w;
}

}  // namespace goodput::cpu
