// The serving engine's host side (data/hardware/engines.json): the CPU work an
// engine adds to every step and every request beside the GPU's, which the
// roofline alone does not see. vLLM's entry is fitted to the public validation
// set (data/validation/, docs/calibration.md); "none" is the GPU work alone.
#pragma once

#include <string>
#include <vector>

#include "core/status.h"
#include "hw/cost_model.h"

namespace goodput {

struct EngineHost {
  std::string name;                 // "vllm", "none"
  double step_overhead_s = 0.0005;  // fixed cost of one step (launches, scheduling)
  double per_sequence_s = 0;        // per request in the step (inputs, sampling, detokenizing, streaming)
  double frontend_latency_s = 0;    // the API server's time before the scheduler sees a request
  bool async_scheduling = false;    // host work overlaps the GPU's (CostFactors::async_scheduling)
  // Its scheduler admits a request only with blocks for its whole length
  // (SchedulerConfig::guaranteed_no_evict, TensorRT-LLM's default).
  bool guaranteed_no_evict = false;
  // Its scheduler splits a prompt over steps (SchedulerConfig::chunked_prefill).
  bool chunked_prefill = true;
  // Its scheduler computes prompts before decodes (SchedulerConfig::prefill_first, SGLang's).
  bool prefill_first = false;
  std::string source;
};

// Every entry of the engines catalog, in file order. Errors name the file
// and the entry: a missing or negative figure, a duplicate name.
Result<std::vector<EngineHost>> LoadEngineHosts();

// The entry named `name`; NotFound naming the known ones otherwise.
Result<EngineHost> FindEngineHost(const std::string& name);

// `f` with the engine's host factors in place of its own.
CostFactors WithEngineHost(CostFactors f, const EngineHost& e);

}  // namespace goodput
