// The engine's loop (sim/engine_loop.h) measured in goodput serve's timed
// step logs: the time from a step's end to the next step's start while the
// engine had work; and for the requests of a closed loop's clients that
// follow a finish, whether they reached the engine before the next step
// started, and how long after its start when they did not.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/step_log.h"
#include "sim/engine_loop.h"

namespace goodput {

struct EngineLoopFit {
  EngineLoop loop;          // a part measured too rarely keeps its default
  int64_t gaps = 0;         // step ends followed at once by the next step
  int64_t follow_ups = 0;   // finishes paired with their client's next request
  int64_t races = 0;        // of those, after a step the engine followed at once
  int64_t joined = 0;       // of those, arrived before the next step started
  int64_t closed_logs = 0;  // logs of a closed loop (where follow-ups are paired)
};

// Fits the loop to `logs` (each a whole log: its times are on one clock;
// untimed version 1 logs are skipped). A step counts as followed at once when
// a request of it that did not finish runs in the next step (the engine had
// work and did not wait). A log is a closed loop when at least half of its
// finishes are followed, before the next step ends and within 30 ms, by a
// request not seen before: each finish is paired with such an arrival in
// time order (in an open loop arrivals are independent of finishes and pair
// with few), the first arrival rank 0, the next rank 1. A follow-up of a
// step followed at once raced the next step: it joined if it arrived by that
// step's start, else it is a late follow-up, timed from that start. Each part
// needs 20 samples. A time's median grows linearly with the requests in the
// step and the follow-up's rank (least squares over the medians of the
// request counts 1, 2, 3-4, 5-8, ... and ranks 0, 1, 2, 3+), its spread is 20
// quantiles of the samples over that median; the chance to join falls
// linearly in the log2 of the requests and in the rank (least squares over
// the shares of the same buckets that hold 10 races or more).
EngineLoopFit FitEngineLoop(const std::vector<std::vector<LoggedStep>>& logs);

}  // namespace goodput
