#include "model/params.h"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>
#include <utility>

#include "core/text.h"

namespace goodput {
namespace {

struct Part {
  int64_t linear = 0;
  int64_t replicated = 0;  // of linear: held whole by every tensor-parallel rank
  int64_t small = 0;
};

Part StandardAttention(const ModelSpec& m) {
  const AttentionDims& a = m.attn;
  const int64_t h = m.hidden_size;
  const int64_t q = a.num_heads * a.head_dim;
  const int64_t kv = a.num_kv_heads * a.head_dim;
  Part p;
  p.linear = h * q * (a.output_gate ? 2 : 1) + 2 * h * kv + q * h;
  if (a.bias) p.small += q + 2 * kv + h;
  if (a.qk_norm) p.small += 2 * a.head_dim;
  if (a.sinks) p.small += a.num_heads;
  return p;
}

Part Mla(const ModelSpec& m) {
  const MlaDims& d = m.mla;
  const int64_t h = m.hidden_size;
  const int64_t heads = m.attn.num_heads;
  const int64_t qk_head = d.qk_nope_head_dim + d.qk_rope_head_dim;
  Part p;
  // The down-projections to the latents (q_a, kv_a with the rope key) are not
  // split by heads: vLLM, SGLang and TensorRT-LLM hold them whole on every
  // tensor-parallel rank (ReplicatedLinear; TensorRT-LLM's "Fuse_A" GEMM).
  p.replicated = h * (d.kv_lora_rank + d.qk_rope_head_dim);
  if (d.q_lora_rank > 0) {
    p.replicated += h * d.q_lora_rank;
    p.linear += d.q_lora_rank * heads * qk_head;
    p.small += d.q_lora_rank;
  } else {
    p.linear += h * heads * qk_head;
  }
  p.linear += p.replicated;
  p.linear += d.kv_lora_rank * heads * (d.qk_nope_head_dim + d.v_head_dim);
  p.linear += heads * d.v_head_dim * h;
  p.small += d.kv_lora_rank;
  return p;
}

Part GatedDeltaNet(const ModelSpec& m) {
  const LinearAttentionDims& d = m.linear;
  const int64_t h = m.hidden_size;
  const int64_t key_dim = d.num_key_heads * d.key_head_dim;
  const int64_t value_dim = d.num_value_heads * d.value_head_dim;
  Part p;
  p.linear = h * (2 * key_dim + 2 * value_dim) + h * 2 * d.num_value_heads + value_dim * h;
  p.small = (2 * key_dim + value_dim) * d.conv_kernel + 2 * d.num_value_heads + d.value_head_dim;
  return p;
}

Part Mamba1(const ModelSpec& m) {
  const MambaDims& d = m.mamba;
  const int64_t h = m.hidden_size;
  Part p;
  p.linear = h * 2 * d.d_inner + d.d_inner * (d.dt_rank + 2 * d.d_state) + d.dt_rank * d.d_inner + d.d_inner * h;
  p.small = d.d_inner * d.d_conv + (d.conv_bias ? d.d_inner : 0) + d.d_inner /* dt bias */ +
            d.d_inner * d.d_state /* A_log */ + d.d_inner /* D */ + d.dt_rank + 2 * d.d_state /* Jamba norms */;
  if (d.proj_bias) p.small += 2 * d.d_inner + h;
  return p;
}

Part Mamba2(const ModelSpec& m) {
  const MambaDims& d = m.mamba;
  const int64_t h = m.hidden_size;
  const int64_t conv_dim = d.d_inner + 2 * d.n_groups * d.d_state;
  const int64_t in_proj = 2 * d.d_inner + 2 * d.n_groups * d.d_state + d.num_heads;
  Part p;
  p.linear = h * in_proj + d.d_inner * h;
  p.small = conv_dim * d.d_conv + (d.conv_bias ? conv_dim : 0) + 3 * d.num_heads + d.d_inner;
  if (d.proj_bias) p.small += in_proj + h;
  return p;
}

Part Mixer(const ModelSpec& m, LayerKind k) {
  switch (k) {
    case LayerKind::kFullAttention:
    case LayerKind::kSlidingAttention: return StandardAttention(m);
    case LayerKind::kMla: return Mla(m);
    case LayerKind::kLinearAttention: return GatedDeltaNet(m);
    case LayerKind::kMamba: return Mamba1(m);
    case LayerKind::kMamba2: return Mamba2(m);
    case LayerKind::kMlpOnly: return {};
  }
  return {};
}

// Nemotron-H's feed-forward is up/down with squared ReLU; the others gate.
int64_t MlpMatrices(const ModelSpec& m) { return m.model_type == "nemotron_h" ? 2 : 3; }

int64_t VisionParams(const VisionDims& v) {
  const int64_t h = v.hidden;
  const int64_t block = 4 * h * h + 4 * h + 2 * h * v.intermediate + v.intermediate + h + 4 * h;
  const int64_t embed = v.in_channels * v.temporal_patch * v.patch * v.patch * h + h + v.positions * h;
  const int64_t merged = h * v.merge * v.merge;
  const int64_t projector = v.merge > 1 ? 2 * h + merged * merged + merged + merged * v.out_hidden + v.out_hidden
                                        : h * v.out_hidden + h + 2 * h;
  return v.layers * block + embed + projector;
}

}  // namespace

ParamCounts CountParams(const ModelSpec& m) {
  ParamCounts c;
  const int64_t h = m.hidden_size;
  c.embedding = m.vocab_size * h;
  c.lm_head = m.tie_word_embeddings ? 0 : m.vocab_size * h;
  c.small = h;  // final norm
  int64_t active_experts = 0;
  const MoeDims& e = m.moe;
  const int64_t expert = MlpMatrices(m) * h * e.expert_intermediate;
  for (const LayerSpec& l : m.layers) {
    const Part mixer = Mixer(m, l.kind);
    c.mixer_linear += mixer.linear;
    c.mixer_replicated += mixer.replicated;
    c.small += mixer.small + m.norms_per_layer * h;
    if (l.mlp == MlpKind::kDense) c.dense_mlp += MlpMatrices(m) * h * m.intermediate_size;
    if (l.mlp != MlpKind::kMoe) continue;
    const int64_t bias = e.expert_bias ? 2 * e.expert_intermediate + h : 0;  // gate_up and down biases
    c.routed_experts += e.num_experts * (expert + bias);
    active_experts += e.experts_per_token * (expert + bias);
    c.shared_experts += MlpMatrices(m) * h * e.shared_intermediate;
    c.router += h * e.num_experts + (e.shared_gate ? h : 0);
    c.small += e.router_bias ? e.num_experts : 0;
  }
  if (m.vision) c.vision = VisionParams(*m.vision);
  c.active = c.lm_head + c.mixer_linear + c.dense_mlp + active_experts + c.shared_experts + c.router + c.small;
  if (m.tie_word_embeddings) c.active += c.embedding;  // the tied table is also the output projection
  return c;
}

namespace {

// The parts --unquantized names, in the order UnquantizedPartsName lists them.
constexpr std::pair<const char*, bool UnquantizedParts::*> kUnquantizedParts[] = {
    {"attention", &UnquantizedParts::attention},
    {"dense-mlp", &UnquantizedParts::dense_mlp},
    {"shared-experts", &UnquantizedParts::shared_experts},
    {"draft", &UnquantizedParts::draft},
};

}  // namespace

void UnquantizedParts::Merge(const UnquantizedParts& other) {
  for (const auto& [name, field] : kUnquantizedParts) this->*field = this->*field || other.*field;
}

Result<UnquantizedParts> ParseUnquantizedParts(const std::string& list) {
  UnquantizedParts parts;
  if (list.empty()) return parts;
  for (const std::string& name : Split(list, ',')) {
    const auto* part = std::find_if(std::begin(kUnquantizedParts), std::end(kUnquantizedParts),
                                    [&name](const auto& p) { return name == p.first; });
    if (part == std::end(kUnquantizedParts)) {
      return Status::InvalidArgument(
          fmt::format("unknown part '{}' (use attention, dense-mlp, shared-experts, draft)", name));
    }
    parts.*(part->second) = true;
  }
  return parts;
}

std::string UnquantizedPartsName(const UnquantizedParts& parts) {
  std::string out;
  for (const auto& [name, field] : kUnquantizedParts) {
    if (!(parts.*field)) continue;
    if (!out.empty()) out += ',';
    out += name;
  }
  return out;
}

double UnquantizedParamsPerGpu(const ParamCounts& p, const UnquantizedParts& parts, int tensor_parallel) {
  const double tp = static_cast<double>(tensor_parallel);
  double split = 0, whole = 0;
  if (parts.attention) {
    split += static_cast<double>(p.mixer_linear - p.mixer_replicated);
    whole += static_cast<double>(p.mixer_replicated);
  }
  if (parts.dense_mlp) split += static_cast<double>(p.dense_mlp);
  if (parts.shared_experts) split += static_cast<double>(p.shared_experts);
  return split / tp + whole;
}

double DenseLinearParamsPerGpu(const ParamCounts& p, int tensor_parallel) {
  return UnquantizedParamsPerGpu(p, {.attention = true, .dense_mlp = true, .shared_experts = true}, tensor_parallel);
}

}  // namespace goodput
