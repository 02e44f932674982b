#include "calibrate/ledger_fit.h"

#include <algorithm>
#include <cmath>
#include <tuple>

#include <fmt/format.h>

#include "hw/fit.h"
#include "measure/point.h"
#include "sim/sim_target.h"

namespace goodput {
namespace {

// The factors a fit may move, by the names LedgerFitOptions::factors takes,
// with their bounds (fitted in log).
struct FittedFactor {
  const char* name;
  double CostFactors::*field;
  double lo, hi;
};
constexpr FittedFactor kFittable[] = {
    {"compute-efficiency", &CostFactors::compute_efficiency, 0.01, 1.0},
    {"expert-efficiency", &CostFactors::expert_efficiency, 0.01, 1.0},
    {"bandwidth-efficiency", &CostFactors::bandwidth_efficiency, 0.05, 1.0},
    {"step-overhead", &CostFactors::step_overhead_s, 1e-6, 1.0},
    {"per-request-cost", &CostFactors::per_sequence_s, 1e-8, 0.05},
    {"frontend-latency", &CostFactors::frontend_latency_s, 1e-5, 10.0},
};

Result<std::vector<FittedFactor>> Selected(const std::vector<std::string>& names) {
  std::vector<FittedFactor> out;
  for (const std::string& name : names) {
    const auto* f = std::find_if(std::begin(kFittable), std::end(kFittable),
                                 [&](const FittedFactor& k) { return name == k.name; });
    if (f == std::end(kFittable)) {
      return Status::InvalidArgument(fmt::format(
          "unknown factor '{}' to fit (compute-efficiency, expert-efficiency, bandwidth-efficiency, step-overhead, "
          "per-request-cost, frontend-latency)",
          name));
    }
    out.push_back(*f);
  }
  if (out.empty()) return Status::InvalidArgument("nothing to fit: name at least one factor");
  return out;
}

// `base` with the selected factors at exp(x).
CostFactors FactorsFrom(const CostFactors& base, const std::vector<FittedFactor>& fitted,
                        const std::vector<double>& x) {
  CostFactors f = base;
  for (size_t i = 0; i < fitted.size(); ++i) {
    f.*fitted[i].field = std::exp(x[i]);
    if (fitted[i].field == &CostFactors::compute_efficiency) f.efficiency_curve.clear();  // one efficiency now
  }
  return f;
}

// A simulated load's figures; zeros when it could not be simulated.
struct Simulated {
  double ttft_p50 = 0, tpot_p50 = 0, throughput = 0;
};

Simulated Run(const MeasuredLoad& t, const SimSetup& setup, const CostFactors& f) {
  const CostModel cost(setup.cost->model(), f);
  std::vector<MeasuredRun> runs;
  for (int repetition = 1; repetition <= t.repetitions; ++repetition) {
    auto run = SimulateMeasuredRun(t.workload, t.load, repetition, setup.options, cost);
    if (!run.ok()) return {};
    runs.push_back(std::move(*run));
  }
  const PointResult p = Summarise(t.workload, t.load, runs);
  return Simulated{p.ttft.p50, p.tpot.p50, p.throughput};
}

double LogError(double modeled, double measured) {
  return modeled > 0 ? std::log(modeled / measured) : 5.0;  // a figure the simulator could not give costs a lot
}

// (what, measured, modeled) for each figure `t` has.
std::vector<std::tuple<const char*, double, double>> Figures(const MeasuredLoad& t, const Simulated& s) {
  std::vector<std::tuple<const char*, double, double>> out;
  for (auto [what, measured, modeled] : {std::tuple{"TTFT p50", t.ttft_p50, s.ttft_p50},
                                         std::tuple{"TPOT p50", t.tpot_p50, s.tpot_p50},
                                         std::tuple{"throughput", t.throughput, s.throughput}}) {
    if (measured > 0) out.emplace_back(what, measured, modeled);
  }
  return out;
}

// The run's points of its first setting, each with the workload as it ran
// there: the stored file is as given, so a `--requests` the run was started
// with is only in the point's request count. At most `max_requests`. Loads
// that were not sustainable are left out (counted in `saturated`): their
// latencies grew with the run's length, which a fit cannot follow.
Result<std::vector<MeasuredLoad>> LedgerLoads(Ledger& ledger, int64_t run, const Workload& w, int64_t max_requests,
                                              int* saturated) {
  GOODPUT_ASSIGN_OR_RETURN(std::vector<StoredPoint> points, ledger.GetPoints(run));
  std::vector<MeasuredLoad> out;
  for (const StoredPoint& p : points) {
    if (p.setting != points.front().setting) continue;
    const PointResult& s = p.summary;
    if (!(s.ttft.p50 > 0) || !(s.tpot.p50 > 0) || !(s.throughput > 0)) continue;
    if (s.saturation.saturated) {
      ++*saturated;
      continue;
    }
    Workload ran = w;
    if (p.requests_per_run > 0) ran.requests = p.requests_per_run;
    ran.requests = std::min(ran.requests, max_requests);
    out.push_back(MeasuredLoad{std::move(ran), s.load, "load " + s.label, s.ttft.p50, s.tpot.p50, s.throughput,
                               std::max(1, s.repeats)});
  }
  if (out.empty()) {
    return Status::InvalidArgument(fmt::format("ledger run {} has no sustained point with TTFT, TPOT and throughput{}",
                                               run,
                                               *saturated ? fmt::format(" ({} not sustainable)", *saturated) : ""));
  }
  return out;
}

}  // namespace

Result<Calibration> FitMeasuredLoads(const std::vector<MeasuredLoad>& loads, const SimSetup& setup,
                                     const HardwareSpec& hardware, const std::string& source,
                                     const LedgerFitOptions& options) {
  if (loads.empty()) return Status::InvalidArgument("nothing to fit: no measured load");
  GOODPUT_ASSIGN_OR_RETURN(const std::vector<FittedFactor> fitted, Selected(options.factors));
  const CostFactors& base = setup.cost->factors();
  const auto objective = [&](const std::vector<double>& x) {
    const CostFactors f = FactorsFrom(base, fitted, x);
    double sum = 0;
    for (const MeasuredLoad& t : loads) {
      for (auto [what, measured, modeled] : Figures(t, Run(t, t.setup ? *t.setup : setup, f))) {
        sum += std::pow(LogError(modeled, measured), 2);
      }
    }
    return sum;
  };
  std::vector<FitParameter> params;
  for (const FittedFactor& k : fitted) {
    // Experts without a rate of their own (0) start at the other matmuls'.
    const bool dense_experts = k.field == &CostFactors::expert_efficiency && base.expert_efficiency == 0;
    const double start = dense_experts ? base.compute_efficiency : base.*k.field;
    params.push_back({std::log(std::clamp(start, k.lo, k.hi)), std::log(k.lo), std::log(k.hi)});
  }
  bool budget_spent = false;
  GOODPUT_ASSIGN_OR_RETURN(std::vector<double> x, Minimize(objective, params, options.max_evaluations, &budget_spent));
  Calibration c;
  c.stopped_at_budget = budget_spent;
  c.factors = FactorsFrom(base, fitted, x);
  c.hardware = hardware;
  c.model = setup.plan.model.name;
  c.weight_precision = setup.plan.precision.name;
  c.source = source;
  double sum = 0;
  for (const MeasuredLoad& t : loads) {
    for (auto [what, measured, modeled] : Figures(t, Run(t, t.setup ? *t.setup : setup, c.factors))) {
      c.residuals.push_back(FitResidual{fmt::format("{}: {}", t.label, what), measured, modeled});
      sum += std::pow(LogError(modeled, measured), 2);
    }
  }
  c.measurements = static_cast<int64_t>(c.residuals.size());
  c.rms_log_error = std::sqrt(sum / static_cast<double>(c.residuals.size()));
  return c;
}

Result<Calibration> FitLedgerRun(Ledger& ledger, int64_t run, const SimSetup& setup, const HardwareSpec& hardware,
                                 const LedgerFitOptions& options) {
  GOODPUT_ASSIGN_OR_RETURN(StoredRun stored, ledger.GetRun(run));
  auto parsed = ParseWorkload(stored.info.workload_text, fmt::format("ledger run {}'s workload", run), ".");
  if (!parsed.ok()) return parsed.status();
  int saturated = 0;
  GOODPUT_ASSIGN_OR_RETURN(std::vector<MeasuredLoad> loads,
                           LedgerLoads(ledger, run, *parsed, options.max_requests, &saturated));
  return FitMeasuredLoads(
      loads, setup, hardware,
      fmt::format("goodput calibrate ledger: run {} ({}; {} points{}; target {})", run, stored.info.command,
                  loads.size(), saturated ? fmt::format(", {} not sustainable left out", saturated) : "",
                  stored.info.target),
      options);
}

}  // namespace goodput
