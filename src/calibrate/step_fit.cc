#include "calibrate/step_fit.h"

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "calibrate/fit.h"
#include "core/stats.h"

namespace goodput {
namespace {

// Parameters, all in log space but the overlap: [overhead, per request,
// bandwidth, attention rate at each AttentionTokens()..., matmul rate at each
// CurveTokens()..., overlap].
CostFactors FactorsFrom(const std::vector<double>& x) {
  CostFactors f;
  f.step_overhead_s = std::exp(x[0]);
  f.per_sequence_s = std::exp(x[1]);
  f.bandwidth = std::exp(x[2]);
  f.bandwidth_efficiency = 1;
  f.peak_flops = 1;  // the curves hold absolute rates during the fit
  size_t k = 3;
  for (double t : AttentionTokens()) f.attention_curve.emplace_back(t, std::exp(x[k++]));
  for (double t : CurveTokens()) f.efficiency_curve.emplace_back(t, std::exp(x[k++]));
  f.compute_efficiency = f.efficiency_curve.back().second;
  f.overlap = x.back();
  return f;
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

const std::vector<double>& CurveTokens() {
  static const std::vector<double> tokens = {1, 4, 16, 64, 256, 1024};
  return tokens;
}

const std::vector<double>& AttentionTokens() {
  static const std::vector<double> tokens = {1, 16, 256};
  return tokens;
}

Result<Calibration> FitSteps(const DeployedModel& model, const std::vector<MeasuredStep>& steps) {
  std::vector<FitParameter> params = {
      {std::log(1e-4), std::log(1e-7), std::log(1.0)},    // per-step overhead: 0.1 us .. 1 s
      {std::log(1e-5), std::log(1e-8), std::log(0.1)},    // per request
      {std::log(2e10), std::log(1e8), std::log(1e13)},    // bandwidth, bytes/s
  };
  // Rates are bounded by twice the fastest any step appears to compute (its
  // matmul FLOPs over its whole time): a step that is all memory says
  // nothing about its rate, which would otherwise run off to infinity.
  const double bound = 2 * FastestApparentRate(model, steps);
  for (size_t i = 0; i < AttentionTokens().size(); ++i) params.push_back({std::log(bound / 20), std::log(1e7), std::log(bound)});
  for (size_t i = 0; i < CurveTokens().size(); ++i) params.push_back({std::log(bound / 4), std::log(1e8), std::log(bound)});
  params.push_back({0.5, 0, 1});  // overlap
  if (steps.size() < params.size()) {
    return Status::InvalidArgument("a step fit needs at least " + std::to_string(params.size()) + " measured steps");
  }
  const auto objective = [&](const std::vector<double>& x) {
    const CostModel cost(model, FactorsFrom(x));
    double sum = 0;
    for (const MeasuredStep& s : steps) {
      const double e = std::log(ModelSeconds(cost, s) / s.seconds);
      sum += s.weight * e * e;
    }
    return sum;
  };
  GOODPUT_ASSIGN_OR_RETURN(std::vector<double> x, Minimize(objective, params, 20000));
  Calibration c;
  c.factors = Normalised(FactorsFrom(x));
  const CostModel fitted(model, c.factors);
  double sum = 0;
  std::vector<FitResidual> each;
  for (const MeasuredStep& s : steps) {
    const double modeled = ModelSeconds(fitted, s);
    each.push_back(FitResidual{s.shape, s.seconds, modeled});
    sum += std::pow(std::log(modeled / s.seconds), 2);
  }
  c.residuals = GroupedByShape(each);
  c.measurements = static_cast<int64_t>(steps.size());
  c.rms_log_error = std::sqrt(sum / static_cast<double>(steps.size()));
  return c;
}

}  // namespace goodput
