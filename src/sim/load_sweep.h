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
  // The measurement's own health (a load generator's; the simulator's are 0).
  double failed = 0;              // failed requests per run (median); they count against attainment
  std::string top_error;          // the most frequent failure reason, with its count
  double send_lag_p99 = 0;        // the worst repetition's p99 of t_sent - t_arrival
  double usage_mismatch = 0;      // requests per run whose usage disagrees with the counted chunks
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

// A ladder of loads, or a capacity search, with its verdict.
struct SweepResult {
  std::vector<PointResult> points;  // by load, ascending for a search
  std::optional<size_t> capacity;   // index into points
  bool capped = false;              // the highest load tried still held
};
using PointRunner = std::function<Result<PointResult>(const ArrivalSpec&)>;

// Runs every load of `ladder` in order; the capacity is the last load before
// the first that fails.
Result<SweepResult> RunLadder(const PointRunner& run, const std::vector<ArrivalSpec>& ladder);

// SearchCapacity from `base` (its concurrency is replaced from 1 up; a rate
// starts at base.rate) up to `max_load` (0: 4096 clients or 1000 req/s).
// Closed-loop loads stop at half of `requests_per_run`: with more clients
// than that, most requests belong to the first wave (which is warm-up) and
// the run has no steady state to judge.
Result<SweepResult> RunCapacitySearch(const PointRunner& run, const ArrivalSpec& base, double max_load,
                                      int64_t requests_per_run);

}  // namespace goodput
