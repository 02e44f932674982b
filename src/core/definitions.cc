#include "core/definitions.h"

namespace goodput {

const char* const kMetricDefinitions = R"(Definitions (docs/metrics.md):
  TTFT = first token-carrying chunk - arrival (the scheduled time in open loop, so the
  client's own lateness counts; an empty role-only chunk carries no token, a chunk
  whose continuous usage count grows carries that many, its text shown or not).
  TPOT = (last token - first token) / (output tokens - 1), only for 2+ tokens; output
  tokens from the server's usage, else counted. ITL = the gap between token-carrying
  chunks (a chunk of k tokens: gap / k, k times). E2E = last token - arrival.
  Per-request speed = 1 / median TPOT.
  A request is good when it meets every target of its class; failed, timed-out and
  cut-off requests stay in the denominator. Attainment = good / total. A class holds its
  SLO when its attainment >= its highest percentile (p99 -> 99%). Goodput = good
  requests / s. Capacity = the last load before some class stops holding its SLO.
  Each load runs --repeat times with different seeds; figures are medians, spread =
  (max - min) / median throughput. Warm-up and cool-down requests are not measured.
)";

}  // namespace goodput
