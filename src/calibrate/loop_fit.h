// The engine's loop (sim/engine_loop.h) measured in goodput serve's timed
// step logs: the time from a step's end to the next step's start while the
// engine had work, and from the end of a step that finished requests to the
// arrival of their clients' next requests.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/step_log.h"
#include "sim/engine_loop.h"

namespace goodput {

struct EngineLoopFit {
  EngineLoop loop;          // a time measured too rarely keeps its default
  int64_t gaps = 0;         // step ends followed at once by the next step
  int64_t follow_ups = 0;   // finishes paired with their client's next request
  int64_t closed_logs = 0;  // logs of a closed loop (where follow-ups are paired)
};

// Fits the loop to `logs` (each a whole log: its times are on one clock;
// untimed version 1 logs are skipped). A step counts as followed at once when
// a request of it that did not finish runs in the next step (the engine had
// work and did not wait). A log is a closed loop when at least half of its
// finishes are followed, before the next step ends and within 30 ms, by a
// request not seen before: each finish is paired with such an arrival in
// time order (in an open loop arrivals are independent of finishes and pair
// with few), the first arrival rank 0, the next rank 1. Each time needs 20
// samples; its median grows linearly with the requests in the step and the
// follow-up's rank (least squares over the medians of the request counts 1,
// 2, 3-4, 5-8, ... and ranks 0, 1, 2, 3+), its spread is 20 quantiles of the
// samples over that median.
EngineLoopFit FitEngineLoop(const std::vector<std::vector<LoggedStep>>& logs);

}  // namespace goodput
