// The engine's steps as they ran (goodput serve --step-log FILE): per step
// when it started and how long it took on the engine's clock — scheduling and
// execution, with whatever else the machine was doing — and what each request
// in it computed, when that request reached the engine and whether the step
// finished it. goodput calibrate fits the simulator's cost model to the
// steps' times, and the engine's loop (the time between steps, a closed-loop
// client's next request after a finish) to the starts and arrivals: the steps
// goodput serve really took while serving. goodput sim --step-log writes the
// same format with each simulated step's modeled times, to set beside serve's.
//
// Text, one step per line after a '#' header (times in seconds):
//   START SECONDS COUNT  COMPUTED NEW SAMPLES ARRIVAL FINISHED  ...
// Version 1 logs (SECONDS COUNT  COMPUTED NEW SAMPLES ...) are still read,
// without the times of the engine's loop.
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
  double arrival = 0;        // when it reached the engine (timed logs)
  bool finished = false;     // the step finished it (timed logs)
};

struct LoggedStep {
  bool timed = false;  // start, arrivals and finishes are known (version 2)
  double start = 0;
  double seconds = 0;
  std::vector<StepRequest> requests;
};

void WriteStepLogHeader(std::ostream& out);
// Appends `step`: its requests, when it started and how long it took.
void WriteStepLogLine(std::ostream& out, const ObservedStep& step);

// Creates (or empties) the step log at `path`, writes its header, and returns
// the observer that appends each step to it (the file stays open as long as
// the observer lives). Errors: "cannot write the step log PATH".
Result<StepObserver> OpenStepLog(const std::string& path);

// Reads a step log. Errors name the file and line: not a step log, a line
// that does not parse, no steps.
Result<std::vector<LoggedStep>> ReadStepLog(const std::string& path);

}  // namespace goodput
