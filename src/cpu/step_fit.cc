#include "cpu/step_fit.h"

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "core/host.h"
#include "core/stats.h"
#include "plan/deployment.h"
#include "plan/planner.h"

namespace goodput::cpu {
namespace {

// Where the two efficiency curves are fitted for a set of steps.
struct Knots {
  std::vector<double> attention;  // by a request's new tokens
  std::vector<double> matmul;     // by a step's tokens
};

// Parameters, all in log space but the overlap: [overhead, per request,
// bandwidth, attention rate at each knot..., matmul rate at each knot...,
// overlap].
CostFactors FactorsFrom(const std::vector<double>& x, const Knots& knots) {
  CostFactors f;
  f.step_overhead_s = std::exp(x[0]);
  f.per_sequence_s = std::exp(x[1]);
  f.bandwidth = std::exp(x[2]);
  f.bandwidth_efficiency = 1;
  f.peak_flops = 1;  // the curves hold absolute rates during the fit
  size_t k = 3;
  for (double t : knots.attention) f.attention_curve.emplace_back(t, std::exp(x[k++]));
  for (double t : knots.matmul) f.efficiency_curve.emplace_back(t, std::exp(x[k++]));
  f.compute_efficiency = f.efficiency_curve.back().second;
  f.overlap = x.back();
  return f;
}

// The standard knots (`standard`) over what the steps reach, [lo, hi]: its
// ends themselves and the standard knots well inside them (a knot within a
// factor of 2 of an end is left to the end). A curve is constant beyond its
// ends, so the fit carries the rate of the longest step it saw past it,
// rather than a trend toward a knot that no step informs.
std::vector<double> KnotsWithin(const std::vector<double>& standard, double lo, double hi) {
  std::vector<double> knots = {lo};
  for (double t : standard) {
    if (t > 2 * lo && t < hi / 2) knots.push_back(t);
  }
  if (hi > lo) knots.push_back(hi);
  return knots;
}

Knots KnotsFor(const std::vector<MeasuredStep>& steps, const StepFitKnots& standard) {
  double step_lo = INFINITY, step_hi = 0, request_lo = INFINITY, request_hi = 0;
  for (const MeasuredStep& s : steps) {
    double tokens = 0;
    for (const StepRequest& r : s.requests) {
      const auto n = static_cast<double>(std::max<int64_t>(1, r.num_new));
      tokens += n;
      request_lo = std::min(request_lo, n), request_hi = std::max(request_hi, n);
    }
    step_lo = std::min(step_lo, std::max(1.0, tokens)), step_hi = std::max(step_hi, tokens);
  }
  return Knots{KnotsWithin(standard.attention, request_lo, request_hi), KnotsWithin(standard.matmul, step_lo, step_hi)};
}

// How much a knot's log rate may move from its neighbour's, in the fit's
// objective (per unit of step weight): little enough that a knot the steps
// inform follows them (a real curve's knots, 1-2 apart in log rate, cost
// under 0.1% of a typical fit's squared error), enough that a knot few steps
// inform stays near its neighbours. Without it, a fit to two loads of short
// chats put the attention rate at 16 tokens at 1/25,000 of its neighbours'.
constexpr double kSmoothness = 1e-4;

// The sum of squared differences between adjacent knots' log rates, over
// both curves (FactorsFrom's layout).
double CurvesRoughness(const std::vector<double>& x, const Knots& knots) {
  double sum = 0;
  size_t k = 3;
  for (const size_t n : {knots.attention.size(), knots.matmul.size()}) {
    for (size_t i = 1; i < n; ++i) sum += std::pow(x[k + i] - x[k + i - 1], 2);
    k += n;
  }
  return sum;
}

double ModelSeconds(const CostModel& cost, const MeasuredStep& s) {
  CostModel::Step step;
  for (const StepRequest& r : s.requests) cost.Add(step, r.num_computed, r.num_new, r.samples);
  return cost.Seconds(step);
}

// Rates relative to the best one, so that efficiencies stay in (0, 1].
CostFactors Normalised(CostFactors f) {
  double best = 0;
  for (const auto& [tokens, rate] : f.efficiency_curve) best = std::max(best, rate);
  for (const auto& [tokens, rate] : f.attention_curve) best = std::max(best, rate);
  for (auto& [tokens, rate] : f.efficiency_curve) rate /= best;
  for (auto& [tokens, rate] : f.attention_curve) rate /= best;
  f.peak_flops = best;
  f.compute_efficiency = f.efficiency_curve.back().second;
  return f;
}

double FastestApparentRate(const DeployedModel& model, const std::vector<MeasuredStep>& steps) {
  CostFactors unit;
  unit.peak_flops = 1;
  unit.compute_efficiency = 1;
  unit.bandwidth = 1;
  const CostModel cost(model, unit);
  double best = 1e8;
  for (const MeasuredStep& s : steps) {
    CostModel::Step step;
    for (const StepRequest& r : s.requests) cost.Add(step, r.num_computed, r.num_new, r.samples);
    best = std::max(best, cost.MatmulSeconds(step) / s.seconds);  // FLOPs at a rate of 1 FLOP/s
  }
  return best;
}

// Steps of the same shape (a step log's thousands) as one row each: the
// mean measured and modeled time, "(N steps)". The mean, not the median: the
// fit weighs each step by its time, so it follows the mean step (throughput
// does too), and a shared machine's stalls put a small step's mean 5-15%
// above its median.
std::vector<FitResidual> GroupedByShape(const std::vector<FitResidual>& each) {
  std::vector<std::string> order;
  std::map<std::string, std::pair<std::vector<double>, std::vector<double>>> groups;
  for (const FitResidual& r : each) {
    auto [it, fresh] = groups.try_emplace(r.what);
    if (fresh) order.push_back(r.what);
    it->second.first.push_back(r.measured);
    it->second.second.push_back(r.modeled);
  }
  std::vector<FitResidual> out;
  for (const std::string& shape : order) {
    auto& [measured, modeled] = groups[shape];
    if (measured.size() == 1) {
      out.push_back(FitResidual{shape, measured[0], modeled[0]});
      continue;
    }
    out.push_back(FitResidual{fmt::format("{} ({} steps)", shape, measured.size()), *Mean(measured), *Mean(modeled)});
  }
  return out;
}

}  // namespace

Result<StepFit> FitSteps(const DeployedModel& model, const std::vector<MeasuredStep>& steps,
                         const StepFitKnots& standard_knots) {
  std::vector<FitParameter> params = {
      {std::log(1e-4), std::log(1e-7), std::log(1.0)},    // per-step overhead: 0.1 us .. 1 s
      {std::log(1e-5), std::log(1e-8), std::log(0.1)},    // per request
      {std::log(2e10), std::log(1e8), std::log(1e13)},    // bandwidth, bytes/s
  };
  // Rates are bounded by twice the fastest any step appears to compute (its
  // matmul FLOPs over its whole time): a step that is all memory says
  // nothing about its rate, which would otherwise run off to infinity.
  const double bound = 2 * FastestApparentRate(model, steps);
  const Knots knots = KnotsFor(steps, standard_knots);
  for (size_t i = 0; i < knots.attention.size(); ++i)
    params.push_back({std::log(bound / 20), std::log(1e7), std::log(bound)});
  for (size_t i = 0; i < knots.matmul.size(); ++i)
    params.push_back({std::log(bound / 4), std::log(1e8), std::log(bound)});
  params.push_back({0.5, 0, 1});  // overlap
  if (steps.size() < params.size()) {
    return Status::InvalidArgument("a step fit needs at least " + std::to_string(params.size()) + " measured steps");
  }
  double total_weight = 0;
  for (const MeasuredStep& s : steps) total_weight += s.weight;
  const auto objective = [&](const std::vector<double>& x) {
    const CostModel cost(model, FactorsFrom(x, knots));
    double sum = 0;
    for (const MeasuredStep& s : steps) {
      const double e = std::log(ModelSeconds(cost, s) / s.seconds);
      sum += s.weight * e * e;
    }
    return sum + kSmoothness * total_weight * CurvesRoughness(x, knots);
  };
  GOODPUT_ASSIGN_OR_RETURN(std::vector<double> x, Minimize(objective, params, 20000));
  StepFit c;
  c.factors = Normalised(FactorsFrom(x, knots));
  const CostModel fitted(model, c.factors);
  double sum = 0;
  for (const MeasuredStep& s : steps) sum += std::pow(std::log(ModelSeconds(fitted, s) / s.seconds), 2);
  c.residuals = ShapeResiduals(model, c.factors, steps);
  c.measurements = static_cast<int64_t>(steps.size());
  c.rms_log_error = std::sqrt(sum / static_cast<double>(steps.size()));
  return c;
}

std::vector<FitResidual> ShapeResiduals(const DeployedModel& model, const CostFactors& factors,
                                        const std::vector<MeasuredStep>& steps) {
  const CostModel cost(model, factors);
  std::vector<FitResidual> each;
  each.reserve(steps.size());
  for (const MeasuredStep& s : steps) each.push_back(FitResidual{s.shape, s.seconds, ModelSeconds(cost, s)});
  return GroupedByShape(each);
}

Result<DeployedModel> DeployedCpuModel(const CpuEngine& engine) {
  PlanOptions o;
  o.gpu = "cpu";
  o.cpu = true;
  o.total_memory = HostMemoryBytes();
  o.total_is_nominal = true;
  o.engine = engine.config;
  o.engine.scheduler.eos_token_id = -1;
  if (o.engine.cache.kv_cache_dtype == "int8") o.engine.cache.kv_cache_dtype = "fp8";  // the planner's type of one byte
  GOODPUT_ASSIGN_OR_RETURN(const Plan plan, MakePlan(engine.model, o));
  if (!plan.startup_error.empty()) return Status::FailedPrecondition(plan.startup_error);
  return DeployedModelFromPlan(plan);
}

}  // namespace goodput::cpu
