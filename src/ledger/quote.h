// Which figures may be quoted, decided by rule rather than by eye. A point is
// quotable when it has enough repetitions, its repetitions agree, few of its
// requests failed, the client kept its schedule, and — the source's caveat —
// a low-concurrency point is not noisy (there a few slow requests move the
// median a lot, so its figures swing from run to run).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/host_load.h"
#include "measure/point.h"

namespace goodput {

struct QuoteRules {
  int min_repeats = 3;                       // the source repeats each point 5 times; 3 is the floor
  double max_spread = 0.10;                  // (max - min) / median of the repetitions' throughput
  double max_error_rate = 0.01;              // failed requests / requests per run
  double max_send_lag_s = 0.010;             // the client's own lateness, p99
  int low_concurrency = 4;                   // closed-loop loads at or below this are "low"
  double low_concurrency_max_spread = 0.05;  // and must agree this closely
  double max_host_others_share = kBusyHostShare;  // other work on the measuring host (core/host_load.h)
};

struct Quotability {
  bool quotable = true;
  std::vector<std::string> reasons;  // why not (empty when quotable)
  std::string Text() const;          // "quotable" or "not quotable: a; b"
};

Quotability JudgePoint(const PointResult& p, int64_t requests_per_run, const QuoteRules& rules = {});

}  // namespace goodput
