// goodput sim's cost-model flags: each overrides one factor of the card's,
// the engine's or the calibration's (--compute-efficiency, --step-overhead,
// --eager-prompt-kernel, --cuda-graph-max-batch, ...).
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <optional>

#include "sim/setup.h"

namespace goodput {

struct CostArgs {
  std::optional<double> compute_efficiency, expert_efficiency, bandwidth_efficiency, step_overhead, per_request_cost;
  std::optional<double> frontend_latency, kernel_latency, overlap, eager_kernel, allreduce_latency;
  std::optional<int64_t> graph_max_batch;
  int async_scheduling = 0;  // +1 --async-scheduling, -1 --no-async-scheduling, 0 the engine's (CLI11 counts a flag)
};

// The flags' names, for messages about a value out of range.
inline constexpr const char* kCostOverrideFlags =
    "--compute-efficiency, --expert-efficiency, --bandwidth-efficiency, --step-overhead, --per-request-cost, "
    "--frontend-latency, --kernel-latency, --allreduce-latency, --eager-prompt-kernel, --cuda-graph-max-batch, "
    "--overlap";

// Adds the flags to `c`, filling `a`.
void AddCostFlags(CLI::App& c, CostArgs& a);

// The cost factors the flags override (none given: empty).
CostOverrides OverridesOf(const CostArgs& a);

}  // namespace goodput
