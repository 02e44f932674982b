// The engine's steps as they ran (goodput serve --step-log FILE): per step its
// duration on the engine's clock — scheduling and execution, with whatever
// else the machine was doing — and what each request in it computed. goodput
// calibrate fits the simulator's cost model to such a log: the steps goodput
// serve really took while serving. goodput sim --step-log writes the same
// format with each simulated step's modeled time, to set beside serve's.
//
// Text, one step per line after a '#' header:
//   SECONDS COUNT  COMPUTED NEW SAMPLES  COMPUTED NEW SAMPLES ...
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "core/status.h"
#include "engine/step.h"

namespace goodput {

// What one request computed in a step.
struct StepRequest {
  int64_t num_computed = 0;  // tokens already in the KV cache
  int64_t num_new = 0;       // tokens computed now
  bool samples = true;       // the step samples a token for it
};

struct LoggedStep {
  double seconds = 0;
  std::vector<StepRequest> requests;
};

void WriteStepLogHeader(std::ostream& out);
// Appends `plan` (its requests) and how long it took.
void WriteStepLogLine(std::ostream& out, const StepPlan& plan, double seconds);

// Creates (or empties) the step log at `path`, writes its header, and returns
// the observer that appends each step to it (the file stays open as long as
// the observer lives). Errors: "cannot write the step log PATH".
Result<StepObserver> OpenStepLog(const std::string& path);

// Reads a step log. Errors name the file and line: not a step log, a line
// that does not parse, no steps.
Result<std::vector<LoggedStep>> ReadStepLog(const std::string& path);

}  // namespace goodput
