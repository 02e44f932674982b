// Which figures may be quoted, decided by rule rather than by eye. A point is
// quotable when it is sustainable, has enough repetitions and they agree
// (more closely at low concurrency: the source's caveat, where a few slow
// requests move the median a lot), every class with an SLO has the requests
// its percentile needs, few requests failed, the client kept its schedule and
// no other work took the host. The rules are one table (QuoteRuleTable), which
// `goodput ledger rules` prints and docs/measuring.md reprints.
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

// One rule as the table states it: its name, its threshold under `rules`,
// and why it is a rule.
struct QuoteRule {
  std::string name;
  std::string threshold;
  std::string why;
};

// Every rule, in the order JudgePoint checks them.
std::vector<QuoteRule> QuoteRuleTable(const QuoteRules& rules = {});

// The table as Markdown (a header and one row per rule).
std::string QuoteRuleMarkdown(const QuoteRules& rules = {});

// One rule's outcome for a point: what was measured against the threshold.
struct RuleCheck {
  std::string rule;  // QuoteRule::name
  bool passed = true;
  std::string detail;  // "5 repetitions", "throughput spread 25.0% > 10%"
};

struct Quotability {
  bool quotable = true;
  std::vector<std::string> reasons;  // why not (the failed checks' details; empty when quotable)
  std::vector<RuleCheck> checks;     // every rule, passed or not, in the table's order
  std::string Text() const;          // "quotable" or "not quotable: a; b"
};

Quotability JudgePoint(const PointResult& p, int64_t requests_per_run, const QuoteRules& rules = {});

}  // namespace goodput
