// Builds a simulation from the planner's deployment: the KV pool's blocks and
// layer groups, and the cost model, all from one Plan so the simulator uses
// the memory the planner counted.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "engine/kv_cache_manager.h"
#include "hw/cost_model.h"
#include "hw/hardware.h"
#include "plan/planner.h"
#include "sim/simulator.h"

namespace goodput {

struct SimSetup {
  Plan plan;
  std::unique_ptr<CostModel> cost;
  SimOptions options;
  // What the engine would log at start beyond its KV lines: a warning
  // (WeightOnlyWarning), the data-parallel replicas.
  std::vector<std::string> startup_lines;
};

// Plans the deployment and fills the simulator's options: the engine
// settings are plan_options.engine, with sizes resolved by the plan (vLLM's
// defaults for the GPU). A deployment vLLM would refuse to start is an error
// naming why.
// With `factors` (a calibration's), they replace the hardware entry's;
// without, the card's efficiencies carry the host-side costs of `engine`
// (data/hardware/engines.json: "vllm", or "none" for the GPU work alone).
Result<SimSetup> SetupSimulation(const ModelSpec& model, const PlanOptions& plan_options, const HardwareSpec& hw,
                                 const CostFactors* factors = nullptr, const std::string& engine = "vllm");

// What a user overrides of a simulation's cost factors (goodput sim's
// --compute-efficiency, --step-overhead, ...): each one given replaces the
// card's, the engine's or the calibration's.
struct CostOverrides {
  std::optional<double> compute_efficiency, expert_efficiency, bandwidth_efficiency, overlap, kernel_latency_s;
  std::optional<double> step_overhead_s, per_sequence_s, frontend_latency_s, eager_kernel_s, link_latency_s;
  std::optional<int64_t> graph_max_batch;
  std::optional<bool> async_scheduling;

  bool empty() const {
    return !compute_efficiency && !expert_efficiency && !bandwidth_efficiency && !overlap && !kernel_latency_s &&
           !step_overhead_s && !per_sequence_s && !frontend_latency_s && !eager_kernel_s && !link_latency_s &&
           !graph_max_batch && !async_scheduling;
  }
};

// Rebuilds `setup`'s cost model with the given overrides (none given: left
// as it is). Errors: a factor out of its range (CheckFactors), the message
// naming `flags`.
Status ApplyCostOverrides(const CostOverrides& overrides, const std::string& flags, SimSetup& setup);

// The same for catalog names: `options` need not name the GPU or its memory.
// For the programs that check the simulator's mechanisms by hand arithmetic
// (tests, perf/sim_throughput): the GPU work alone unless `engine` names one.
Result<SimSetup> SetupCatalogSimulation(const std::string& model, const std::string& gpu, PlanOptions options,
                                        const std::string& engine = "none");

}  // namespace goodput
