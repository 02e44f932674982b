// One run of a workload against a Target, as the measurement layer sees it:
// the per-request records (DESIGN.md §1), the window they are judged over,
// and whatever engine counters the target can see (the simulator sees its
// steps and preemptions; an HTTP target its server's preemptions when the
// server has vLLM's /metrics).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "core/request_record.h"
#include "core/slo.h"
#include "workload/workload.h"

namespace goodput {

struct EngineCounters {
  int64_t steps = 0;
  std::optional<int64_t> preemptions;  // empty: the target cannot see them
  int64_t rejected = 0;  // requests the engine refused (longer than the max model length or the KV pool)
};

struct MeasuredRun {
  std::vector<RequestRecord> records;  // in issue order
  Window window;                       // the measurement window (warm-up and cool-down excluded)
  EngineCounters engine;
};

// The window of `records`: the workload's warm-up and cool-down applied to
// the requests' arrivals. A closed loop's first wave (records marked
// first_wave) is always warm-up. An offline batch (every request arriving at
// once) is measured from its arrival to its last token: its drain.
Window MeasurementWindow(const Workload& workload, const std::vector<RequestRecord>& records);

}  // namespace goodput
