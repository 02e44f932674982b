#include "measure/saturation.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>

#include "core/stats.h"

namespace goodput {
namespace {

// When a record left the backlog: its last token, or its arrival when it
// failed before one (a rejection or an error holds no place in the queue).
double Done(const RequestRecord& r) { return r.ok && r.t_last ? *r.t_last : r.t_arrival; }

// Requests that had arrived by `t` and were not done.
int64_t BacklogAt(const std::vector<RequestRecord>& records, double t) {
  int64_t n = 0;
  for (const RequestRecord& r : records) n += r.t_arrival <= t && Done(r) > t;
  return n;
}

// Least-squares slope of a latency over arrival time, for the window's requests.
double Slope(const std::vector<RequestRecord>& records, Window w,
             std::optional<double> (*latency)(const RequestRecord&)) {
  double n = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (const RequestRecord& r : records) {
    const auto y = latency(r);
    if (!y || r.t_arrival < w.start || r.t_arrival >= w.end) continue;
    const double x = r.t_arrival - w.start;
    n += 1, sx += x, sy += *y, sxx += x * x, sxy += x * *y;
  }
  const double den = n * sxx - sx * sx;
  return n >= 2 && den > 0 ? (n * sxy - sx * sy) / den : 0;
}

}  // namespace

std::string Saturation::Evidence() const {
  return fmt::format(
      "{:.0f}% of the {:.3g} requests/s offered were served (in a window as long, one median latency "
      "later), the backlog grew by {:.2f} requests/s, TTFT rose {:.2f} s per second of the run",
      100 * served_share, offered_rate, backlog_growth, ttft_slope);
}

Saturation RunSaturation(const std::vector<RequestRecord>& records, Window w, bool open_loop) {
  Saturation s;
  const double secs = w.seconds();
  if (secs <= 0) return s;
  std::vector<double> e2e;
  for (const RequestRecord& r : records) {
    const auto latency = E2e(r);
    if (r.ok && latency && r.t_arrival >= w.start && r.t_arrival < w.end) e2e.push_back(*latency);
  }
  int64_t arrived = 0, served = 0;
  const double lag = e2e.empty() ? 0 : *Median(e2e);
  for (const RequestRecord& r : records) {
    arrived += r.t_arrival >= w.start && r.t_arrival < w.end;
    served += r.ok && r.t_last && *r.t_last >= w.start + lag && *r.t_last < w.end + lag;
  }
  if (arrived == 0) return s;
  s.offered_rate = static_cast<double>(arrived) / secs;
  s.served_share = std::min(1.0, static_cast<double>(served) / static_cast<double>(arrived));
  s.backlog_growth = static_cast<double>(BacklogAt(records, w.end) - BacklogAt(records, w.start)) / secs;
  s.ttft_slope = Slope(records, w, Ttft);
  const bool queue_grows = s.ttft_slope > kSaturatedTtftSlope && s.ttft_slope * secs > 1;
  s.saturated = open_loop && (s.served_share < kSaturatedServed || queue_grows);
  return s;
}

Saturation PoolSaturation(const std::vector<Saturation>& runs) {
  Saturation s;
  if (runs.empty()) return s;
  std::vector<double> offered, growth, served, slope;
  size_t saturated = 0;
  for (const Saturation& r : runs) {
    offered.push_back(r.offered_rate);
    growth.push_back(r.backlog_growth);
    served.push_back(r.served_share);
    slope.push_back(r.ttft_slope);
    saturated += r.saturated;
  }
  s.saturated = 2 * saturated > runs.size();
  s.offered_rate = *Median(offered);
  s.backlog_growth = *Median(growth);
  s.served_share = *Median(served);
  s.ttft_slope = *Median(slope);
  return s;
}

}  // namespace goodput
