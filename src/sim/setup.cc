#include "sim/setup.h"

#include <fmt/format.h>

#include "hw/engine_host.h"
#include "model/catalog.h"
#include "plan/deployment.h"

namespace goodput {

Result<SimSetup> SetupSimulation(const ModelSpec& model, const PlanOptions& plan_options, const HardwareSpec& hw,
                                 const CostFactors* calibrated, const std::string& engine) {
  SimSetup s;
  GOODPUT_ASSIGN_OR_RETURN(s.plan, MakePlan(model, plan_options));
  if (!s.plan.startup_error.empty()) return Status::FailedPrecondition(s.plan.startup_error);
  CostFactors factors;
  // A calibration's engine schedules as vLLM (a default entry) unless the flags say otherwise.
  EngineHost host;
  if (calibrated) {
    factors = *calibrated;
  } else {
    GOODPUT_ASSIGN_OR_RETURN(factors, FactorsFor(hw, s.plan.precision.name));
    GOODPUT_ASSIGN_OR_RETURN(host, FindEngineHost(engine));
    factors = WithEngineHost(factors, host);
    const PlanOptions& o = s.plan.options;
    if (auto fused = host.FusedAllReduceLatency(model.architecture, model.hidden_size, hw.arch, o.tensor_parallel,
                                                o.data_parallel)) {
      factors.link_latency_s = *fused;
      s.startup_lines.push_back(fmt::format(
          "{} fuses each all-reduce with the norm after it ({:g} us and the norm's kernel, where the card's "
          "all-reduce takes {:g} us; --allreduce-latency overrides)",
          host.name, *fused * 1e6, hw.link_latency_s * 1e6));
    }
    if (auto g = host.DefaultGraphMaxBatch(hw.TotalMemoryBytes(), o.tensor_parallel * o.data_parallel)) {
      factors.graph_max_batch = *g;
      s.startup_lines.push_back(fmt::format(
          "{} replays CUDA graphs for decode steps of up to {} requests{}; larger ones launch their kernels "
          "from the host (--cuda-graph-max-batch overrides)",
          host.name, *g, o.data_parallel > 1 ? " a replica" : ""));
    }
    if (auto w = WeightOnlyWarning(hw, s.plan.precision.name)) s.startup_lines.push_back(*w);
  }
  s.cost = std::make_unique<CostModel>(DeployedModelFromPlan(s.plan), factors);
  SchedulerConfig& sc = s.options.scheduler;
  sc = s.plan.options.engine.scheduler;  // sizes resolved by the plan
  // The engine's scheduling, and the plan's flags' (--prefill-first: V0's whole prompts first) over it.
  sc.guaranteed_no_evict = host.guaranteed_no_evict;
  sc.chunked_prefill = host.chunked_prefill && s.plan.options.engine.scheduler.chunked_prefill;
  sc.prefill_first = host.prefill_first || s.plan.options.engine.scheduler.prefill_first;
  // A budget the flags leave to the engine, where the engine has its own and chunks prompts.
  const auto budget = host.DefaultTokenBudget(hw.TotalMemoryBytes(), plan_options.data_parallel);
  if (budget && plan_options.engine.scheduler.max_num_batched_tokens == 0 && sc.chunked_prefill)
    sc.max_num_batched_tokens = *budget;
  s.options.kv_groups = s.plan.layout.EngineGroups();
  s.options.prefix_caching = s.plan.options.engine.cache.enable_prefix_caching;
  s.options.num_blocks = s.plan.capacity.num_blocks;
  s.options.kv_block_bytes = s.plan.layout.page_bytes * s.plan.layout.group_size;  // a block's pages, one GPU's
  if (const int dp = s.plan.options.data_parallel; dp > 1) {
    // Data-parallel replicas, scheduled as one engine with every replica's
    // pool and limits (requests taken as spread evenly over them).
    s.options.num_blocks *= dp;
    s.options.scheduler.max_num_seqs *= dp;
    s.options.scheduler.max_num_batched_tokens *= dp;
    const PlanOptions& o = s.plan.options;
    s.startup_lines.push_back(fmt::format(
        "data parallel: {} replicas of {} GPU{} ({} GPUs), each with the KV cache above and max_num_seqs {}; "
        "MoE layers over all {} GPUs{}",
        dp, o.tensor_parallel, o.tensor_parallel == 1 ? "" : "s", MoeGroupSize(o), o.engine.scheduler.max_num_seqs,
        MoeGroupSize(o), o.expert_parallel ? " (whole experts per GPU)" : ""));
  }
  return s;
}

Status ApplyCostOverrides(const CostOverrides& o, const std::string& flags, SimSetup& setup) {
  if (o.empty()) return Status::Ok();
  CostFactors f = setup.cost->factors();
  f.compute_efficiency = o.compute_efficiency.value_or(f.compute_efficiency);
  f.expert_efficiency = o.expert_efficiency.value_or(f.expert_efficiency);
  f.bandwidth_efficiency = o.bandwidth_efficiency.value_or(f.bandwidth_efficiency);
  f.overlap = o.overlap.value_or(f.overlap);
  f.kernel_latency_s = o.kernel_latency_s.value_or(f.kernel_latency_s);
  f.step_overhead_s = o.step_overhead_s.value_or(f.step_overhead_s);
  f.per_sequence_s = o.per_sequence_s.value_or(f.per_sequence_s);
  f.frontend_latency_s = o.frontend_latency_s.value_or(f.frontend_latency_s);
  f.eager_kernel_s = o.eager_kernel_s.value_or(f.eager_kernel_s);
  f.link_latency_s = o.link_latency_s.value_or(f.link_latency_s);
  f.graph_max_batch = o.graph_max_batch.value_or(f.graph_max_batch);
  f.async_scheduling = o.async_scheduling.value_or(f.async_scheduling);
  GOODPUT_RETURN_IF_ERROR(CheckFactors(f, flags));
  setup.cost = std::make_unique<CostModel>(setup.cost->model(), f);
  return Status::Ok();
}

Result<SimSetup> SetupCatalogSimulation(const std::string& model, const std::string& gpu, PlanOptions options,
                                        const std::string& engine) {
  GOODPUT_ASSIGN_OR_RETURN(ModelSpec spec, LoadModel(model));
  GOODPUT_ASSIGN_OR_RETURN(HardwareSpec hw, FindGpu(gpu));
  options.gpu = hw.name;
  options.gpu_arch = hw.arch;
  options.total_memory = hw.TotalMemoryBytes();
  options.total_is_nominal = hw.total_is_nominal();
  return SetupSimulation(spec, options, hw, nullptr, engine);
}

}  // namespace goodput
