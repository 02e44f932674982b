// What a measurement drives (docs/architecture.md, seam 6): an OpenAI-compatible
// endpoint (client/http_target.h), goodput serve started for the run or a
// server started from a command (client/server_process.h), or the simulator
// (sim/sim_target.h). Ladders, capacity searches and --vary are written once
// against this interface (measure/measurement.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "core/status.h"
#include "measure/run.h"
#include "workload/workload.h"

namespace goodput {

class Target {
 public:
  virtual ~Target() = default;
  // Runs `workload` at `load` to the end of its request budget. `repetition`
  // (1, 2, ...) varies the requests' seed. The run's records, window and
  // whatever engine counters the target can see.
  virtual Result<MeasuredRun> Run(const Workload& workload, const ArrivalSpec& load, int repetition) = 0;
  // One line for people: "http://127.0.0.1:8000/v1 (model m)", "sim:h100 (...)".
  virtual std::string Describe() const = 0;
  // The engine's start-up lines a reader of its figures should see, when the
  // target knows them: its KV cache ("GPU KV cache size: N tokens", "Maximum
  // concurrency ...") and, for goodput serve, which kernels run its matrix
  // products ("matrix products: ..."); "" otherwise.
  virtual std::string StartupLines() const { return ""; }
  // Device memory the engine leaves unallocated (a safety margin), when the
  // target knows it (the simulator, from its plan); empty otherwise.
  virtual std::optional<int64_t> MemoryHeadroomBytes() const { return std::nullopt; }
  // The OpenAI-compatible API the target measures ("http://HOST:PORT/v1"),
  // for requests beside the load (comparing answers); "" for the simulator.
  virtual std::string ServedUrl() const { return ""; }
};

}  // namespace goodput
