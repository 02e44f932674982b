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

// A point's load as a number: its clients (closed loop) or its rate.
double LoadOf(const PointResult& p);

// The capacity of a ladder: the last load that holds before the first that
// fails. An undecided load (too few measured requests, not a failure) is
// passed over: loads above it may still hold.
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
// reached; when `start` itself fails, halving down until a load holds (to
// one client, or start / 64 for rates); then bisection between the highest
// pass and the lowest failure, until the failure is within `resolution` (a
// share) above the pass: for integer loads (concurrency) at least down to
// adjacent values (resolution 0: exactly adjacent), for rates to 5% when
// `resolution` is 0.
Result<CapacitySearch> SearchCapacity(const std::function<Result<PointResult>(double)>& run, double start,
                                      double max, bool integer, double resolution = 0);

// Where a capacity search starts and how finely it ends.
struct CapacitySearchOptions {
  double start = 0;       // the first load (0: one client, or the base load's rate)
  double max_load = 0;    // 0: 4096 clients or 1000 req/s
  double resolution = 0;  // see SearchCapacity
};

// SearchCapacity from `base` (its concurrency or rate replaced by each load
// tried). Closed-loop loads stop at half of `requests_per_run`: with more
// clients than that, most requests belong to the first wave (which is
// warm-up) and the run has no steady state to judge.
Result<SweepResult> RunCapacitySearch(const PointRunner& run, const ArrivalSpec& base,
                                      const CapacitySearchOptions& options, int64_t requests_per_run);

}  // namespace goodput
