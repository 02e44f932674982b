// Whether an open load outran the engine: requests arrived faster than they
// were served, so the queue grew for as long as the load lasted and every
// latency depends on the run's length. Such a load is "not sustainable",
// whatever its SLO verdicts say (a load without an SLO would otherwise
// "hold" at any rate). Closed loops cannot outrun the engine: each client
// waits for its answer.
#pragma once

#include <string>
#include <vector>

#include "core/slo.h"
#include "measure/run.h"

namespace goodput {

struct Saturation {
  bool saturated = false;
  // Evidence, over the measurement window (medians over the repetitions):
  double offered_rate = 0;    // requests / s that arrived in the window
  double served_share = 1;    // requests completed in the window shifted by the median E2E / those that arrived in it
  double backlog_growth = 0;  // requests / s by which those arrived and not yet finished grew
  double ttft_slope = 0;      // seconds of TTFT gained per second of arrival (least squares)
  // "31% of the 40/s offered were served (...), the backlog grew by 27.6
  // requests/s, TTFT rose 0.71 s per second of the run"
  std::string Evidence() const;
};

// A run outran the engine when fewer than kSaturatedServed of the requests
// that arrived in its window were served in a window as long, one median
// end-to-end latency later (a sustained load's requests come out as fast as
// they go in, an overloaded one's at the engine's own rate; the completions
// within the window itself fall short at the start of a window that begins
// empty, while the engine fills to its steady state), or when its TTFT rose
// over the window by more than kSaturatedTtftSlope seconds per second and
// more than a second in all: a queue growing by that share of the engine's
// rate. The served share is loose because a window only a few latencies long
// blurs it (chat.yaml at 16/s on a simulated H100, 160 measured requests:
// 92% with a flat TTFT, and 100% over 1,600); the TTFT slope catches a queue
// growing slowly. Failed requests leave
// the backlog when they arrive. Closed loops never outrun the engine.
// (Simulated A100 runs of Llama-3.1-8B, 1,024 tokens in and 128 out, 2,000
// requests: sustained loads served 99-100% with slopes of 0.001 or less; 7%
// over capacity served 95% with a slope of 0.07; twice over, 47% and 1.16.)
constexpr double kSaturatedServed = 0.80, kSaturatedTtftSlope = 0.05;
Saturation RunSaturation(const std::vector<RequestRecord>& records, Window window, bool open_loop);

// The repetitions pooled: saturated when most of them were; evidence medians.
Saturation PoolSaturation(const std::vector<Saturation>& runs);

}  // namespace goodput
