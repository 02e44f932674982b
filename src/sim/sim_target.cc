#include "sim/sim_target.h"

#include <fmt/format.h>

#include "sim/simulator.h"

namespace goodput {

Result<MeasuredRun> SimulateMeasuredRun(const Workload& workload, const ArrivalSpec& load, int repetition,
                                        SimOptions options, const CostModel& cost) {
  options.seed = static_cast<uint64_t>(repetition);
  options.record_token_times = true;
  GOODPUT_ASSIGN_OR_RETURN(SimRun sim, Simulate(workload, load, options, cost));
  MeasuredRun run;
  run.window = MeasurementWindow(workload, sim.records);
  run.records = std::move(sim.records);
  run.engine.steps = sim.steps;
  run.engine.preemptions = sim.preemptions;
  run.engine.rejected = sim.rejected;
  if (sim.draft_steps > 0) {
    run.engine.spec_decode =
        SpecDecodeCounts{static_cast<double>(sim.draft_steps), static_cast<double>(sim.drafted_tokens),
                         static_cast<double>(sim.draft_step_tokens - sim.draft_steps)};
  }
  if (options.prefix_caching) {
    run.engine.prefix_cache =
        PrefixCacheCounts{static_cast<double>(sim.prefix_queried_tokens), static_cast<double>(sim.prefix_hit_tokens)};
  }
  if (sim.replicas.size() > 1) {
    for (const ReplicaStats& r : sim.replicas) {
      run.engine.replicas.push_back(ReplicaCounts{
          static_cast<double>(r.requests), static_cast<double>(r.steps),
          PrefixCacheCounts{static_cast<double>(r.prefix_queried_tokens), static_cast<double>(r.prefix_hit_tokens)},
          r.prefill});
    }
  }
  return run;
}

std::string DescribeSimTarget(const SimSetup& setup, const std::string& where, const std::string& flags) {
  const Plan& plan = setup.plan;
  const double frontend = setup.cost->factors().frontend_latency_s;
  std::string gpus =
      plan.options.data_parallel > 1
          ? fmt::format("x{} per replica, {} replicas", plan.options.tensor_parallel, plan.options.data_parallel)
          : fmt::format("x{}", plan.options.tensor_parallel);
  const SimOptions& o = setup.options;
  if (o.prefill_replicas > 0) {
    const std::string prefill_size =
        o.prefill_pool ? fmt::format(" (x{}, {} blocks)", o.prefill_pool->tensor_parallel, o.prefill_pool->num_blocks)
                       : "";
    gpus += fmt::format(", {} prefill{} + {} decode instances behind {} routing, KV over {} at {:g} GB/s",
                        o.prefill_replicas, prefill_size, o.replicas, RouterPolicyName(o.router), o.kv_link.name,
                        o.kv_link.bandwidth / 1e9);
  } else if (o.replicas > 1) {
    gpus += fmt::format(", a fleet of {} instances behind {} routing", o.replicas, RouterPolicyName(o.router));
  }
  const SchedulerConfig& sc = plan.options.engine.scheduler;
  std::string policy = SchedulingPolicyName(sc.policy);
  // The engine's admission, chunking and prompt order come from --engine (SetupSimulation) as well as the plan.
  if (o.scheduler.prefill_first) policy += ", prefill first";
  if (sc.num_scheduler_steps > 1) policy += fmt::format(", {}-step runs", sc.num_scheduler_steps);
  if (sc.recv_interval > 1) policy += fmt::format(", arrivals taken in every {} decode steps", sc.recv_interval);
  if (o.scheduler.guaranteed_no_evict) policy += ", guaranteed no evict";
  if (!o.scheduler.chunked_prefill) policy += ", whole prompts";
  return fmt::format("sim:{} ({} {}, {} weights, {} KV, {} blocks of {} tokens, max_num_seqs {}, policy {}{}{}{})",
                     where, plan.model.name, gpus, WeightPrecisionLabel(plan.precision, plan.model),
                     DTypeName(plan.kv_dtype), plan.capacity.num_blocks, plan.layout.attention_block_size,
                     sc.max_num_seqs, policy, frontend > 0 ? fmt::format(", front end {:.1f} ms", frontend * 1e3) : "",
                     flags.empty() ? "" : "; ", flags);
}

Result<MeasuredRun> SimTarget::Run(const Workload& workload, const ArrivalSpec& load, int repetition) {
  return SimulateMeasuredRun(workload, load, repetition, setup_.options, *setup_.cost);
}

std::string SimTarget::StartupLines() const {
  std::string lines = KvCapacityLogLines(setup_.plan.capacity, setup_.plan.options.engine.scheduler.max_model_len);
  for (const std::string& w : setup_.startup_lines) lines += w + "\n";
  return lines;
}

}  // namespace goodput
