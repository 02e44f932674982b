#include "hw/fit.h"

#include <exception>

#include <nlopt.hpp>

namespace goodput {
namespace {

double Trampoline(const std::vector<double>& x, std::vector<double>& /*gradient*/, void* data) {
  return (*static_cast<const std::function<double(const std::vector<double>&)>*>(data))(x);
}

}  // namespace

Result<std::vector<double>> Minimize(const std::function<double(const std::vector<double>&)>& objective,
                                     const std::vector<FitParameter>& parameters, int max_evaluations,
                                     bool* budget_spent) {
  if (budget_spent) *budget_spent = false;
  const unsigned n = static_cast<unsigned>(parameters.size());
  std::vector<double> x(n), lower(n), upper(n);
  for (unsigned i = 0; i < n; ++i) {
    lower[i] = parameters[i].lower;
    upper[i] = parameters[i].upper;
    x[i] = std::min(upper[i], std::max(lower[i], parameters[i].initial));
  }
  try {
    nlopt::opt opt(nlopt::LN_SBPLX, n);
    opt.set_lower_bounds(lower);
    opt.set_upper_bounds(upper);
    opt.set_min_objective(Trampoline, const_cast<std::function<double(const std::vector<double>&)>*>(&objective));
    opt.set_maxeval(max_evaluations);
    opt.set_xtol_rel(1e-6);
    // Figures matched to about 0.01% (squared log errors summing to 1e-8)
    // need no closer fit.
    opt.set_stopval(1e-8);
    double best = 0;
    const nlopt::result why = opt.optimize(x, best);
    if (budget_spent) *budget_spent = why == nlopt::MAXEVAL_REACHED;
  } catch (const nlopt::roundoff_limited&) {
    // Converged as far as floating point allows: x is the best point.
  } catch (const std::exception& e) {
    return Status::FailedPrecondition(std::string("fit: ") + e.what());
  }
  return x;
}

}  // namespace goodput
