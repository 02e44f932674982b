// Fitting an engine's host-side costs (step overhead, per-request cost, front
// end: data/hardware/engines.json) and the GPU kernel latency (the catalog's
// default, data/hardware/gpus.json) to the public validation set, and checking
// the fit by leaving one source out at a time: each source is judged under
// the factors fitted without it.
#pragma once

#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "validation_set.h"

namespace goodput::validation {

struct HostFactors {
  double step_overhead_s = 0;
  double per_sequence_s = 0;
  double frontend_latency_s = 0;
  double kernel_latency_s = 0;
  bool operator<(const HostFactors& o) const;
  // goodput sim's flags for them.
  std::string Flags() const;
};

// The values tried for each factor; the search starts from the first of each.
struct HostGrid {
  std::vector<double> step_overhead_s = {0.0005, 0.001, 0.0015, 0.002, 0.003, 0.004};
  std::vector<double> per_sequence_s = {0, 5e-6, 1e-5, 1.5e-5, 2e-5, 3e-5, 4e-5, 6e-5, 8e-5, 1.2e-4, 1.6e-4};
  std::vector<double> frontend_latency_s = {0, 0.02, 0.035, 0.05, 0.075, 0.1};
  std::vector<double> kernel_latency_s = {0, 1e-6, 2e-6, 3e-6, 4e-6, 5e-6, 6e-6, 8e-6};
};

// Every figure of the rows simulated under some factors (the caller memoises).
using EvaluateHost = std::function<const std::vector<Outcome>&(const HostFactors&)>;

// The median |log(simulated / published)| of the held-out figures (no catalog
// factor fitted to them) whose row's source is in `sources`; 0 when none.
double MedianLogError(const std::vector<Outcome>& outcomes, const std::set<std::string>& sources);

// Coordinate descent over the grid (each factor in turn to its best value,
// the others held, until none moves), minimising MedianLogError on `sources`.
HostFactors FitHostFactors(const HostGrid& grid, const EvaluateHost& evaluate, const std::set<std::string>& sources);

// Each source's factors fitted on all the other sources.
std::map<std::string, HostFactors> LeaveOneSourceOut(const HostGrid& grid, const EvaluateHost& evaluate,
                                                     const std::set<std::string>& sources);

}  // namespace goodput::validation
