#include "plan/deployment.h"

#include <cmath>

namespace goodput {

DeployedModel DeployedModelFromPlan(const Plan& p) {
  DeployedModel d;
  d.model = p.model;
  d.params = p.params;
  d.weight_bytes = p.weights.bytes;
  d.weight_precision = p.precision.name;
  d.tensor_parallel = p.options.tensor_parallel;
  d.expert_weight_bytes = static_cast<int64_t>(std::llround(static_cast<double>(p.params.routed_experts) *
                                                            p.precision.linear_bytes / p.options.tensor_parallel));
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
