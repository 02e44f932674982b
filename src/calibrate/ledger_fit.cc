#include "calibrate/ledger_fit.h"

#include <cmath>

#include <fmt/format.h>

#include "calibrate/fit.h"
#include "measure/point.h"
#include "sim/simulator.h"

namespace goodput {
namespace {

struct Target {
  ArrivalSpec load;
  std::string label;
  double ttft_p50 = 0, tpot_p50 = 0, throughput = 0;
};

// [log compute efficiency, log bandwidth efficiency, log overhead, log per request]
CostFactors FactorsFrom(const CostFactors& base, const std::vector<double>& x) {
  CostFactors f = base;
  f.efficiency_curve.clear();
  f.compute_efficiency = std::exp(x[0]);
  f.bandwidth_efficiency = std::exp(x[1]);
  f.step_overhead_s = std::exp(x[2]);
  f.per_sequence_s = std::exp(x[3]);
  return f;
}

struct Simulated {
  double ttft_p50 = 0, tpot_p50 = 0, throughput = 0;
  bool ok = false;
};

Simulated Run(const Workload& w, const Target& t, const SimSetup& setup, const CostFactors& f) {
  const CostModel cost(setup.cost->model(), f);
  auto run = Simulate(w, t.load, setup.options, cost);
  if (!run.ok()) return {};
  MeasuredRun m;
  m.window = MeasurementWindow(w, run->records);
  m.records = std::move(run->records);
  const PointResult p = Summarise(w, t.load, {m});
  return Simulated{p.ttft.p50, p.tpot.p50, p.throughput, true};
}

double LogError(double modeled, double measured) {
  return measured > 0 && modeled > 0 ? std::log(modeled / measured) : 5.0;  // a missing figure costs a lot
}

Result<std::vector<Target>> Targets(Ledger& ledger, int64_t run) {
  GOODPUT_ASSIGN_OR_RETURN(std::vector<StoredPoint> points, ledger.GetPoints(run));
  std::vector<Target> out;
  for (const StoredPoint& p : points) {
    if (p.setting != points.front().setting) continue;
    const PointResult& s = p.summary;
    if (!(s.ttft.p50 > 0) || !(s.tpot.p50 > 0) || !(s.throughput > 0)) continue;
    out.push_back(Target{s.load, s.label, s.ttft.p50, s.tpot.p50, s.throughput});
  }
  if (out.empty()) return Status::InvalidArgument(fmt::format("ledger run {} has no point with TTFT, TPOT and throughput", run));
  return out;
}

}  // namespace

Result<Calibration> FitLedgerRun(Ledger& ledger, int64_t run, const SimSetup& setup, const HardwareSpec& hardware,
                                 const LedgerFitOptions& options) {
  GOODPUT_ASSIGN_OR_RETURN(StoredRun stored, ledger.GetRun(run));
  auto parsed = ParseWorkload(stored.info.workload_text, fmt::format("ledger run {}'s workload", run), ".");
  if (!parsed.ok()) return parsed.status();
  Workload w = std::move(*parsed);
  w.requests = std::min(w.requests, options.max_requests);
  GOODPUT_ASSIGN_OR_RETURN(std::vector<Target> targets, Targets(ledger, run));
  const CostFactors& base = setup.cost->factors();
  const auto objective = [&](const std::vector<double>& x) {
    const CostFactors f = FactorsFrom(base, x);
    double sum = 0;
    for (const Target& t : targets) {
      const Simulated s = Run(w, t, setup, f);
      sum += std::pow(LogError(s.ttft_p50, t.ttft_p50), 2) + std::pow(LogError(s.tpot_p50, t.tpot_p50), 2) +
             std::pow(LogError(s.throughput, t.throughput), 2);
    }
    return sum;
  };
  const std::vector<FitParameter> params = {
      {std::log(base.compute_efficiency), std::log(0.01), 0},
      {std::log(base.bandwidth_efficiency), std::log(0.05), 0},
      {std::log(std::max(1e-6, base.step_overhead_s)), std::log(1e-6), std::log(1.0)},
      {std::log(std::max(1e-7, base.per_sequence_s)), std::log(1e-8), std::log(0.05)},
  };
  GOODPUT_ASSIGN_OR_RETURN(std::vector<double> x, Minimize(objective, params, options.max_evaluations));
  Calibration c;
  c.factors = FactorsFrom(base, x);
  c.hardware = hardware;
  c.model = setup.plan.model.name;
  c.source = fmt::format("goodput calibrate ledger: run {} ({}; {} points; target {})", run, stored.info.command,
                         targets.size(), stored.info.target);
  double sum = 0;
  for (const Target& t : targets) {
    const Simulated s = Run(w, t, setup, c.factors);
    for (auto [what, measured, modeled] : {std::tuple{"TTFT p50", t.ttft_p50, s.ttft_p50},
                                           std::tuple{"TPOT p50", t.tpot_p50, s.tpot_p50},
                                           std::tuple{"throughput", t.throughput, s.throughput}}) {
      c.residuals.push_back(FitResidual{fmt::format("load {}: {}", t.label, what), measured, modeled});
      sum += std::pow(LogError(modeled, measured), 2);
    }
  }
  c.rms_log_error = std::sqrt(sum / static_cast<double>(c.residuals.size()));
  return c;
}

}  // namespace goodput
