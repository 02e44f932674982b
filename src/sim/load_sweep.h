// Load points, ladders and the capacity search over the simulator: run a
// load with repetitions and summarise it by medians; find the highest load
// at which every class holds its SLO.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/slo.h"
#include "core/status.h"
#include "sim/simulator.h"

namespace goodput {

struct ClassAttainment {
  std::string class_name;
  bool has_slo = false;
  double attainment = 0;  // median over repetitions
  double required = 0;
  bool holds = true;
};

struct PointResult {
  ArrivalSpec load;
  std::string label;       // "32" (concurrency) or "4.0/s" (rate)
  int repeats = 0;
  // Medians over the repetitions.
  double throughput = 0;          // output tokens / s
  double request_rate = 0;        // finished requests / s
  double per_request_speed = 0;   // 1 / median TPOT: tokens / s one user sees
  double ttft_p50 = 0, ttft_p99 = 0, tpot_p50 = 0, tpot_p99 = 0;
  double goodput = 0;             // good requests / s
  double goodput_tokens = 0;      // good output tokens / s
  double throughput_spread = 0;   // (max - min) / median over repetitions
  double preemptions = 0;
  double rejected = 0;
  double steps = 0;
  std::vector<ClassAttainment> classes;
  bool holds = true;              // every class with an SLO holds it (median attainment)
};

// Runs `load` `repeats` times (seeds 1..repeats) and summarises against the
// workload's SLOs.
Result<PointResult> RunPoint(const Workload& workload, const ArrivalSpec& load, const SimOptions& options,
                             const CostModel& cost, int repeats);

// The summary of already-simulated runs (exposed for tests).
PointResult Summarise(const Workload& workload, const ArrivalSpec& load, const std::vector<SimRun>& runs);

// The capacity of a ladder: the last load before the first that fails.
std::optional<size_t> LadderCapacity(const std::vector<PointResult>& ladder);

struct CapacitySearch {
  std::vector<PointResult> probes;  // in the order run
  std::optional<PointResult> capacity;
  bool capped = false;              // still held at the search's maximum
};

// Exponential probe from `start` (x2) until a load fails or `max` is
// reached, then bisection between the last pass and the first failure; for
// integer loads (concurrency) down to adjacent values, for rates to 5%.
Result<CapacitySearch> SearchCapacity(const std::function<Result<PointResult>(double)>& run, double start,
                                      double max, bool integer);

std::string LoadLabel(const ArrivalSpec& load);

}  // namespace goodput
