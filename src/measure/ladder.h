// Loads and what is run over them: a ladder of loads in order, or the
// capacity search (the highest load at which every class holds its SLO).
// Both are written against a PointRunner, so every Target measures the same way.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "measure/point.h"
#include "workload/workload.h"

namespace goodput {

// "1,8,32" -> {1, 8, 32}; every item must be a positive number. Errors name `flag`.
Result<std::vector<double>> ParseLoadList(const std::string& text, const char* flag);

// The loads of --concurrency ("1,8,32": closed loop) or --rate ("1,2,4":
// gamma arrivals of shape `burstiness`, 1 being Poisson; without one, the
// workload's own arrival shape, Poisson when its arrival has none); the
// workload's own arrival when neither is given. Errors: both given, a
// non-positive item or burstiness.
Result<std::vector<ArrivalSpec>> Ladder(const std::string& concurrency, const std::string& rate,
                                        std::optional<double> burstiness, const Workload& w);

// A ladder of loads, or a capacity search, with its verdict.
struct SweepResult {
  std::vector<PointResult> points;  // by load, ascending for a search
  std::optional<size_t> capacity;   // index into points
  bool capped = false;              // the highest load tried still held
};
using PointRunner = std::function<Result<PointResult>(const ArrivalSpec&)>;

// The capacity of a ladder: the last load before the first that fails.
std::optional<size_t> LadderCapacity(const std::vector<PointResult>& ladder);

// Runs the loads of `ladder` in order; the capacity is the last load before
// the first that does not hold. With `stop_at_first_miss` the walk ends at
// that load (a capacity search over a given ladder); otherwise every load runs.
Result<SweepResult> RunLadder(const PointRunner& run, const std::vector<ArrivalSpec>& ladder,
                              bool stop_at_first_miss = false);

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

// SearchCapacity from `base` (its concurrency is replaced from 1 up; a rate
// starts at base.rate) up to `max_load` (0: 4096 clients or 1000 req/s).
// Closed-loop loads stop at half of `requests_per_run`: with more clients
// than that, most requests belong to the first wave (which is warm-up) and
// the run has no steady state to judge.
Result<SweepResult> RunCapacitySearch(const PointRunner& run, const ArrivalSpec& base, double max_load,
                                      int64_t requests_per_run);

}  // namespace goodput
