// A calibration from a ledger run of any target (vLLM on a GPU, goodput
// serve, ...): the cost model's factors that make the simulator, running the
// run's own workload at its own loads, give back the TTFT p50, TPOT p50 and
// throughput the run measured. The simulator is the model here, so whatever
// it models (scheduling, chunked prefill, preemption) is accounted for and
// the factors only absorb what it does not.
#pragma once

#include "calibrate/calibration.h"
#include "core/status.h"
#include "ledger/ledger.h"
#include "sim/setup.h"

namespace goodput {

struct LedgerFitOptions {
  int64_t max_requests = 400;  // per simulated run (the run's own count when smaller)
  int max_evaluations = 400;
};

// Fits compute efficiency, bandwidth efficiency, step overhead and the
// per-request cost of `setup` (its plan and starting factors) to the points
// of ledger run `run` (one --vary setting: the first). Errors: the run has no
// usable point, or its stored workload no longer parses.
Result<Calibration> FitLedgerRun(Ledger& ledger, int64_t run, const SimSetup& setup, const HardwareSpec& hardware,
                                 const LedgerFitOptions& options = {});

}  // namespace goodput
