#include "ledger/quote.h"

#include <fmt/format.h>

#include "core/units.h"

namespace goodput {

std::string Quotability::Text() const {
  if (quotable) return "quotable";
  std::string s = "not quotable: ";
  for (size_t i = 0; i < reasons.size(); ++i) s += (i ? "; " : "") + reasons[i];
  return s;
}

Quotability JudgePoint(const PointResult& p, int64_t requests_per_run, const QuoteRules& r) {
  Quotability q;
  auto fail = [&](std::string why) {
    q.quotable = false;
    q.reasons.push_back(std::move(why));
  };
  if (p.saturation.saturated) fail("not sustainable: " + p.saturation.Evidence());
  if (p.repeats < r.min_repeats) fail(fmt::format("{} repetition(s), fewer than {}", p.repeats, r.min_repeats));
  if (p.throughput_spread > r.max_spread) {
    fail(fmt::format("throughput spread {:.1f}% > {:.0f}%", 100 * p.throughput_spread, 100 * r.max_spread));
  }
  const double error_rate = requests_per_run > 0 ? p.failed / static_cast<double>(requests_per_run) : 0;
  if (error_rate > r.max_error_rate) {
    fail(fmt::format("{:.1f}% of requests failed > {:.0f}%", 100 * error_rate, 100 * r.max_error_rate));
  }
  if (p.send_lag_p99 > r.max_send_lag_s) {
    fail(fmt::format("client send lag p99 {} > {}", FormatDuration(p.send_lag_p99), FormatDuration(r.max_send_lag_s)));
  }
  if (p.host_others_share && *p.host_others_share > r.max_host_others_share) {
    fail(fmt::format("measured on a busy host: other processes took {:.0f}% of its CPU time (> {:.0f}%)",
                     100 * *p.host_others_share, 100 * r.max_host_others_share));
  }
  const bool low = p.load.kind == ArrivalKind::kClosedLoop && p.load.concurrency <= r.low_concurrency;
  if (low && p.throughput_spread > r.low_concurrency_max_spread && p.throughput_spread <= r.max_spread) {
    fail(fmt::format("low concurrency ({}) with spread {:.1f}% > {:.0f}% (the source's caveat)", p.load.concurrency,
                     100 * p.throughput_spread, 100 * r.low_concurrency_max_spread));
  }
  return q;
}

}  // namespace goodput
