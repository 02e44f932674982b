// The engine's loop around its steps, as goodput serve runs it. After a step
// ends, the engine hands the step's outputs to the HTTP sessions before it
// schedules the next step; a closed-loop client's next request reaches the
// engine some time after the step that finished its previous one. A request
// that arrives before the next step starts joins it, a later one waits for
// that step to end, which moves a closed loop's TTFT by up to a step.
// Whether it joins is not a race of two independent times: the engine thread
// shares the machine's cores with the HTTP sessions and the client, and while
// they answer and send again the engine often does not get to its next step
// (in the proof bench's logs 35-80% of the follow-ups joined, where the time
// between steps and the follow-up's time drawn apart would join 13-30%). So
// the loop keeps the chance that a follow-up joins, and when it misses, its
// time after the next step's start. goodput calibrate measures all three in
// goodput serve's step log.
#pragma once

#include <vector>

namespace goodput {

// A time of the loop: a median that grows with the requests in the step
// and, for follow-ups, with their rank among the step's (the sessions are
// answered and the clients send one after another), spread as measured.
struct LoopTime {
  double base_s = 0;         // the median at no requests
  double per_request_s = 0;  // the median's growth per request in the step
  double per_rank_s = 0;     // its growth per follow-up of the same step before this one
  // Each measured time over its median, at the quantiles 1/(2n), 3/(2n), ...
  // of n values, rising; empty: always the median.
  std::vector<double> spread;

  double Median(int requests, int rank = 0) const { return base_s + per_request_s * requests + per_rank_s * rank; }
  // The time at the quantile u in [0, 1] of the spread (interpolated, the
  // ends held flat).
  double Draw(int requests, double u, int rank = 0) const;
};

// The chance that a closed-loop client's next request reaches the engine
// before the next step starts (while the engine has other work): falling
// with each doubling of the requests in the step that finished the client's
// request, and with each follow-up of that step before this one.
struct JoinChance {
  double base = 0;          // after a step of 1 request, the first follow-up
  double per_doubling = 0;  // per doubling of the step's requests
  double per_rank = 0;      // per follow-up of the same step before this one

  // Clamped to [0, 1].
  double At(int requests, int rank = 0) const;
};

struct EngineLoop {
  // From a step's end to the next step's start, while there is work. Not
  // measured: none (the next step starts at once).
  LoopTime between_steps;
  // A follow-up that joins arrives between the steps, before the next one
  // starts. Not measured: none joins.
  JoinChance join;
  // A follow-up that does not join (or finds the engine idle) arrives this
  // long after the next step's start (after the step's end when idle). Not
  // measured: 1 ms.
  LoopTime late_follow_up{1e-3, 0, 0, {}};
  bool measured = false;  // fitted to a step log (else the defaults above)
};

}  // namespace goodput
