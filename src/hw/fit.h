// Least squares on log step times: the parameters of a cost model that make
// it say what was measured. The minimizer is NLopt's Subplex (derivative-
// free, bounded): the cost model's max() and interpolation have no useful
// gradients, and a few hundred evaluations of a closed-form model are cheap.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "core/status.h"

namespace goodput {

// One measurement against what the fitted model says of it.
struct FitResidual {
  std::string what;  // "decode 8 x ctx 512", "load 16: TPOT p50"
  double measured = 0;
  double modeled = 0;
  double Error() const { return measured != 0 ? modeled / measured - 1 : 0; }
};

struct FitParameter {
  double initial = 0;
  double lower = 0;
  double upper = 0;
};

// Minimizes `objective` over parameters within their bounds; returns the best
// parameters found. `budget_spent`, when given, says whether it stopped on
// `max_evaluations` rather than converging. Errors: NLopt refused the problem.
Result<std::vector<double>> Minimize(const std::function<double(const std::vector<double>&)>& objective,
                                     const std::vector<FitParameter>& parameters, int max_evaluations,
                                     bool* budget_spent = nullptr);

}  // namespace goodput
