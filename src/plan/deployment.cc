#include "plan/deployment.h"

#include <cmath>

namespace goodput {

DeployedModel DeployedModelFromPlan(const Plan& p) {
  DeployedModel d;
  d.model = p.model;
  d.params = p.params;
  d.weight_bytes = p.weights.bytes;
  d.unread_weight_bytes = UnreadWeightBytes(p.params, p.model, p.options.tensor_parallel);
  d.weight_precision = p.precision.name;
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
  if (p.options.num_draft_layers > 0 && !p.model.layers.empty()) {
    // EAGLE-style: that many decoder layers of the target's shape, plus the
    // target's LM head, which each draft pass runs too.
    const ParamCounts& c = p.params;
    const double per_layer =
        static_cast<double>(c.mixer_linear + c.dense_mlp + c.shared_experts) /
            static_cast<double>(p.model.layers.size()) +
        static_cast<double>(c.routed_experts) *
            (p.model.IsMoe() ? static_cast<double>(p.model.moe.experts_per_token) / p.model.moe.num_experts : 0) /
            static_cast<double>(p.model.layers.size());
    const double head = static_cast<double>(p.model.vocab_size * p.model.hidden_size);
    const double params = (p.options.num_draft_layers * per_layer + head) / p.options.tensor_parallel;
    d.draft_params = std::llround(params);
    d.draft_layers = p.options.num_draft_layers;
    d.draft_weight_bytes = std::llround(params * p.precision.linear_bytes);
  }
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
