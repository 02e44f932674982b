#include "plan/deployment.h"

#include <cmath>

#include "plan/weights.h"

namespace goodput {

namespace {

// The drafter's pass: that many decoder layers of the target's shape (a routed
// layer's experts_per_token touched), plus the target's LM head, which each
// draft pass runs too; WeightBytes reads each part at its format's bytes, so
// the head stays in the model dtype as a quantized checkpoint keeps it (its
// bytes dominate a pass at small batches).
void AddDrafter(const Plan& p, DeployedModel& d) {
  const ParamCounts& c = p.params;
  const double layers = static_cast<double>(p.options.num_draft_layers) / static_cast<double>(p.model.layers.size());
  const double touched =
      p.model.IsMoe() ? static_cast<double>(p.model.moe.experts_per_token) / p.model.moe.num_experts : 0;
  const int tp = p.options.tensor_parallel;
  ParamCounts pass;
  pass.mixer_linear = std::llround(static_cast<double>(c.mixer_linear) * layers);
  pass.mixer_replicated = std::llround(static_cast<double>(c.mixer_replicated) * layers);
  pass.dense_mlp = std::llround(static_cast<double>(c.dense_mlp) * layers);
  pass.shared_experts = std::llround(static_cast<double>(c.shared_experts) * layers);
  pass.routed_experts = std::llround(static_cast<double>(c.routed_experts) * touched * layers);
  pass.lm_head = p.model.vocab_size * p.model.hidden_size;
  // The join of hidden state and embedding stays in the model dtype (the
  // checkpoints leave it out of their quantization): DeepSeek's eh_proj and
  // EAGLE's fc are plain linear layers, whole on each GPU; Qwen3-Next's and
  // Qwen3.5's mtp.fc a column-parallel one (vLLM's qwen3_next_mtp.py).
  const std::string& type = p.model.model_type;
  const bool split_join = type.rfind("qwen3_next", 0) == 0 || type.rfind("qwen3_5", 0) == 0;
  d.draft_join_params = 2 * p.model.hidden_size * p.model.hidden_size / (split_join ? tp : 1);
  d.draft_params = std::llround(static_cast<double>(pass.total() - pass.mixer_replicated) / tp +
                                static_cast<double>(pass.mixer_replicated)) +
                   d.draft_join_params;
  d.draft_layers = p.options.num_draft_layers;
  // A drafter the checkpoint leaves unquantized is read in the model dtype.
  const Result<WeightPrecision> model_dtype = ResolveWeightPrecision(DTypeName(p.model.dtype), p.model);
  const WeightPrecision& draft = d.unquantized.draft && model_dtype.ok() ? *model_dtype : p.precision;
  d.draft_weight_bytes =
      WeightBytes(pass, draft, p.model, tp, false, tp) + d.draft_join_params * DTypeBytes(p.model.dtype);
}

}  // namespace

DeployedModel DeployedModelFromPlan(const Plan& p) {
  DeployedModel d;
  d.model = p.model;
  d.params = p.params;
  d.weight_bytes = p.weights.bytes;
  d.unread_weight_bytes = UnreadWeightBytes(p.params, p.model, p.options.tensor_parallel);
  d.weight_precision = p.precision.name;
  d.unquantized = p.precision.unquantized;
  d.tensor_parallel = p.options.tensor_parallel;
  const int group = MoeGroupSize(p.options);
  d.data_parallel = p.options.data_parallel;
  const double padding = ExpertPaddingFactor(p.precision, p.model, group, p.options.expert_parallel);
  d.expert_weight_bytes = static_cast<int64_t>(
      std::llround(static_cast<double>(p.params.routed_experts) * padding * p.precision.linear_bytes / group));
  if (p.options.expert_parallel && p.model.IsMoe()) {
    d.expert_parallel = group;
    d.routing_imbalance = p.options.routing_imbalance;
  }
  if (p.options.num_draft_layers > 0 && !p.model.layers.empty()) AddDrafter(p, d);
  for (const CacheSpec& s : p.layout.layer_specs) {
    switch (s.group.type) {
      case KvGroupSpec::Type::kFull: d.full_bytes_per_token += s.bytes_per_token; break;
      case KvGroupSpec::Type::kSlidingWindow:
        d.sliding_bytes_per_token += s.bytes_per_token;
        d.sliding_window = s.group.sliding_window;
        break;
      case KvGroupSpec::Type::kState: d.state_bytes += s.state_bytes; break;
    }
  }
  return d;
}

}  // namespace goodput
