#include "sim/setup.h"

#include "plan/deployment.h"

namespace goodput {

std::vector<KvGroupSpec> KvGroupsFromLayout(const KvLayout& layout) {
  std::vector<KvGroupSpec> out;
  for (const CacheGroup& g : layout.groups) {
    KvGroupSpec s;
    s.block_size = g.spec.block_size;
    switch (g.spec.type) {
      case CacheSpecType::kFullAttention:
      case CacheSpecType::kMla: s.type = KvGroupSpec::Type::kFull; break;
      case CacheSpecType::kSlidingWindow:
        s.type = KvGroupSpec::Type::kSlidingWindow;
        s.sliding_window = g.spec.sliding_window;
        break;
      case CacheSpecType::kState: s.type = KvGroupSpec::Type::kState; break;
    }
    out.push_back(s);
  }
  return out;
}

Result<SimSetup> SetupSimulation(const ModelSpec& model, const PlanOptions& plan_options, const HardwareSpec& hw,
                                 const SchedulerConfig& scheduler, const CostFactors* factors_override) {
  SimSetup s;
  GOODPUT_ASSIGN_OR_RETURN(s.plan, MakePlan(model, plan_options));
  if (!s.plan.startup_error.empty()) return Status::FailedPrecondition(s.plan.startup_error);
  CostFactors factors;
  if (factors_override) {
    factors = *factors_override;
  } else {
    GOODPUT_ASSIGN_OR_RETURN(factors, FactorsFor(hw, s.plan.precision.name));
  }
  s.cost = std::make_unique<CostModel>(DeployedModelFromPlan(s.plan), factors);
  s.options.scheduler = scheduler;
  s.options.scheduler.max_num_batched_tokens = s.plan.options.max_num_batched_tokens;
  s.options.scheduler.max_num_seqs = s.plan.options.max_num_seqs;
  s.options.scheduler.max_model_len = s.plan.options.max_model_len;
  s.options.kv_groups = KvGroupsFromLayout(s.plan.layout);
  s.options.num_blocks = s.plan.capacity.num_blocks;
  return s;
}

}  // namespace goodput
