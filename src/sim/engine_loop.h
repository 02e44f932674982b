// The engine's loop around its steps, as goodput serve runs it. After a step
// ends, the engine hands the step's outputs to the HTTP sessions before it
// schedules the next step; a closed-loop client's next request reaches the
// engine some time after the step that finished its previous one. A request
// that arrives before the next step starts joins it, a later one waits for
// that step to end: in goodput serve's logs a third to two thirds of the
// follow-ups join, which moves a closed loop's TTFT by up to a step. Both
// times grow with the requests in the step (each has its output delivered and
// streamed). goodput calibrate measures them in goodput serve's step log.
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

struct EngineLoop {
  // From a step's end to the next step's start, while there is work. Not
  // measured: none (the next step starts at once).
  LoopTime between_steps;
  // From the end of the step that finished a closed-loop client's request to
  // its next request reaching the engine. Not measured: 1 ms.
  LoopTime follow_up{1e-3, 0, 0, {}};
  bool measured = false;  // fitted to a step log (else the defaults above)
};

}  // namespace goodput
