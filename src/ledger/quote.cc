#include "ledger/quote.h"

#include <fmt/format.h>

#include "core/units.h"

namespace goodput {
namespace {

RuleCheck SustainableCheck(const PointResult& p) {
  if (p.saturation.saturated) return {"sustainable", false, "not sustainable: " + p.saturation.Evidence()};
  return {"sustainable", true, "sustainable"};
}

// The source's caveat: a low-concurrency point must agree more closely (a
// spread over the general limit already fails the spread rule, not this one).
RuleCheck LowConcurrencyCheck(const PointResult& p, const QuoteRules& r) {
  const bool low = p.load.kind == ArrivalKind::kClosedLoop && p.load.concurrency <= r.low_concurrency;
  if (!low) return {"low-concurrency spread", true, fmt::format("concurrency above {}", r.low_concurrency)};
  const double spread = 100 * p.throughput_spread, limit = 100 * r.low_concurrency_max_spread;
  if (p.throughput_spread <= r.low_concurrency_max_spread) {
    return {"low-concurrency spread", true,
            fmt::format("low concurrency ({}) with spread {:.1f}% <= {:.0f}%", p.load.concurrency, spread, limit)};
  }
  if (p.throughput_spread > r.max_spread) {
    return {"low-concurrency spread", true,
            fmt::format("low concurrency ({}): its spread fails the spread rule already", p.load.concurrency)};
  }
  return {"low-concurrency spread", false,
          fmt::format("low concurrency ({}) with spread {:.1f}% > {:.0f}% (the source's caveat)", p.load.concurrency,
                      spread, limit)};
}

// Every class with an SLO has the measured requests its percentile needs
// to be shown (ClassAttainment::min_requests).
RuleCheck RequestsCheck(const PointResult& p) {
  std::string short_classes;
  int64_t fewest = -1;
  for (const ClassAttainment& c : p.classes) {
    if (!c.has_slo) continue;
    if (fewest < 0 || c.total < fewest) fewest = c.total;
    if (c.total >= c.min_requests) continue;
    short_classes += fmt::format("{}class {}: {} measured requests, fewer than the {} its SLO's percentile needs",
                                 short_classes.empty() ? "" : "; ", c.class_name, c.total, c.min_requests);
  }
  if (!short_classes.empty()) return {"requests", false, short_classes};
  if (fewest < 0) return {"requests", true, "no class with an SLO"};
  return {"requests", true, fmt::format("every class with an SLO has the requests it needs (fewest {})", fewest)};
}

RuleCheck QuietHostCheck(const PointResult& p, const QuoteRules& r) {
  if (!p.host_others_share) return {"quiet host", true, "the host's load was not measured"};
  const double others = 100 * *p.host_others_share;
  if (*p.host_others_share > r.max_host_others_share) {
    return {"quiet host", false,
            fmt::format("measured on a busy host: other processes took {:.0f}% of its CPU time (> {:.0f}%)", others,
                        100 * r.max_host_others_share)};
  }
  return {"quiet host", true, fmt::format("other processes took {:.0f}% of the host's CPU", others)};
}

}  // namespace

std::vector<QuoteRule> QuoteRuleTable(const QuoteRules& r) {
  return {
      {"sustainable", "the load is served as fast as it arrives",
       "a growing queue makes every latency an artefact of the run's length"},
      {"repetitions", fmt::format(">= {}", r.min_repeats), "the source repeats each point; one run shows no spread"},
      {"spread", fmt::format("throughput (max - min) / median <= {:.0f}%", 100 * r.max_spread),
       "figures quoted only where repeated runs agree"},
      {"low-concurrency spread",
       fmt::format("<= {:.0f}% at concurrency <= {}", 100 * r.low_concurrency_max_spread, r.low_concurrency),
       "the source's caveat: there a few slow requests move the median a lot"},
      {"requests", "each class with an SLO: >= the measured requests its percentile needs",
       "fewer cannot show the percentile's attainment (docs/metrics.md)"},
      {"failures", fmt::format("<= {:.0f}% of a run's requests", 100 * r.max_error_rate),
       "failed requests leave the latencies of the rest"},
      {"send lag", fmt::format("the client's p99 lateness <= {}", FormatDuration(r.max_send_lag_s)),
       "a late client measures its own schedule, not the server"},
      {"quiet host", fmt::format("other processes <= {:.0f}% of the host's CPU", 100 * r.max_host_others_share),
       "a neighbour's work moves the figures (docs/measuring.md)"},
  };
}

std::string QuoteRuleMarkdown(const QuoteRules& rules) {
  std::string s = "| rule | a point passes when | why |\n|---|---|---|\n";
  for (const QuoteRule& r : QuoteRuleTable(rules)) s += fmt::format("| {} | {} | {} |\n", r.name, r.threshold, r.why);
  return s;
}

std::string Quotability::Text() const {
  if (quotable) return "quotable";
  std::string s = "not quotable: ";
  for (size_t i = 0; i < reasons.size(); ++i) s += (i ? "; " : "") + reasons[i];
  return s;
}

Quotability JudgePoint(const PointResult& p, int64_t requests_per_run, const QuoteRules& r) {
  const double error_rate = requests_per_run > 0 ? p.failed / static_cast<double>(requests_per_run) : 0;
  const std::vector<RuleCheck> checks = {
      SustainableCheck(p),
      {"repetitions", p.repeats >= r.min_repeats,
       p.repeats >= r.min_repeats ? fmt::format("{} repetitions", p.repeats)
                                  : fmt::format("{} repetition(s), fewer than {}", p.repeats, r.min_repeats)},
      {"spread", p.throughput_spread <= r.max_spread,
       fmt::format("throughput spread {:.1f}% {} {:.0f}%", 100 * p.throughput_spread,
                   p.throughput_spread <= r.max_spread ? "<=" : ">", 100 * r.max_spread)},
      LowConcurrencyCheck(p, r),
      RequestsCheck(p),
      {"failures", error_rate <= r.max_error_rate,
       fmt::format("{:.1f}% of requests failed {} {:.0f}%", 100 * error_rate,
                   error_rate <= r.max_error_rate ? "<=" : ">", 100 * r.max_error_rate)},
      {"send lag", p.send_lag_p99 <= r.max_send_lag_s,
       fmt::format("client send lag p99 {} {} {}", FormatDuration(p.send_lag_p99),
                   p.send_lag_p99 <= r.max_send_lag_s ? "<=" : ">", FormatDuration(r.max_send_lag_s))},
      QuietHostCheck(p, r),
  };
  Quotability q;
  q.checks = checks;
  for (const RuleCheck& c : checks) {
    if (c.passed) continue;
    q.quotable = false;
    q.reasons.push_back(c.detail);
  }
  return q;
}

}  // namespace goodput
