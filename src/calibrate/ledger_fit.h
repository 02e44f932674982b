// A calibration from a ledger run of any target (vLLM on a GPU, goodput
// serve, ...): the cost model's factors that make the simulator, running the
// run's own workload at its own loads, give back the TTFT p50, TPOT p50 and
// throughput the run measured. The simulator is the model here, so whatever
// it models (scheduling, chunked prefill, preemption) is accounted for and
// the factors only absorb what it does not.
#pragma once

#include <string>
#include <vector>

#include "calibrate/calibration.h"
#include "core/status.h"
#include "ledger/ledger.h"
#include "sim/setup.h"

namespace goodput {

struct LedgerFitOptions {
  int64_t max_requests = 400;  // per simulated run of a ledger run's workload (its own count when smaller)
  int max_evaluations = 400;
  // The factors fitted (the others keep the setup's): compute-efficiency,
  // bandwidth-efficiency, step-overhead, per-request-cost. Fewer than four
  // when the figures cannot tell them apart. frontend-latency
  // (CostFactors' front end) may be named too.
  std::vector<std::string> factors = {"compute-efficiency", "bandwidth-efficiency", "step-overhead",
                                      "per-request-cost"};
};

// One measured load to fit to: the workload that ran, its load, and the
// figures measured there (seconds, tokens/s); a figure of 0 was not measured
// and is not fitted.
struct MeasuredLoad {
  Workload workload;
  ArrivalSpec load;
  std::string label;  // names the load in the residuals
  double ttft_p50 = 0, tpot_p50 = 0, throughput = 0;
  // The runs the figures summarise (a ledger point's repetitions, seeds 1 to
  // n), simulated alike so that the simulator's figures are the same summary.
  int repetitions = 1;
  // The deployment the load ran on when it is not the fit's own (loads of
  // several engine settings fitted together, as goodput tune's): its plan and
  // options; the factors fitted are shared.
  const SimSetup* setup = nullptr;
};

// Fits the factors `options` names (all four by default) of `setup` (its
// plan and starting factors) so that the simulator, running each load's
// workload at its load, gives back its figures (least squares in log
// error). `source` says where they came from. Errors: no load, an unknown
// or empty factor list.
Result<Calibration> FitMeasuredLoads(const std::vector<MeasuredLoad>& loads, const SimSetup& setup,
                                     const HardwareSpec& hardware, const std::string& source,
                                     const LedgerFitOptions& options = {});

// FitMeasuredLoads on the points of ledger run `run` (one --vary setting:
// the first), each running the run's own workload. Errors: the run has no
// usable point, or its stored workload no longer parses.
Result<Calibration> FitLedgerRun(Ledger& ledger, int64_t run, const SimSetup& setup, const HardwareSpec& hardware,
                                 const LedgerFitOptions& options = {});

}  // namespace goodput
