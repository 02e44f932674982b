#include "measure/diagnose.h"

#include <algorithm>
#include <cctype>
#include <cmath>

#include <fmt/format.h>

#include "core/host_load.h"
#include "core/units.h"

namespace goodput {
namespace {

// Notes per load, merged when several loads say the same: "loads 1, 2, 4: ...".
class Notes {
 public:
  void Add(const std::string& load, const std::string& text) {
    for (auto& [loads, t] : notes_) {
      if (t == text) {
        loads += ", " + load;
        return;
      }
    }
    notes_.emplace_back(load, text);
  }
  void AddGeneral(const std::string& text) { notes_.emplace_back("", text); }
  std::vector<std::string> Lines() const {
    std::vector<std::string> out;
    for (const auto& [loads, text] : notes_) {
      if (loads.empty()) out.push_back(text);
      else out.push_back((loads.find(',') == std::string::npos ? "load " : "loads ") + loads + ": " + text);
    }
    return out;
  }

 private:
  std::vector<std::pair<std::string, std::string>> notes_;
};

// Requests queue when TTFT at least doubles (an engine capped by its
// sequences keeps TPOT flat while requests wait).
bool Queueing(const PointResult& lo, const PointResult& hi) {
  return std::isfinite(lo.ttft.p50) && std::isfinite(hi.ttft.p50) && hi.ttft.p50 >= 2 * std::max(lo.ttft.p50, 1e-3);
}

// The source document's configuration cause: more clients, yet per-token
// time and throughput stay where they were while the first token waits
// longer and longer: the engine runs no more requests at once than before.
std::string SeatCap(const std::vector<PointResult>& points) {
  if (points.size() < 2) return "";
  const PointResult &lo = points.front(), &hi = points.back();
  if (hi.load.kind != ArrivalKind::kClosedLoop || hi.load.concurrency < 4 * lo.load.concurrency) return "";
  const bool tpot_flat = lo.tpot.p50 > 0 && hi.tpot.p50 < 1.1 * lo.tpot.p50 && hi.tpot.p50 > 0.9 * lo.tpot.p50;
  const bool throughput_flat = lo.throughput > 0 && hi.throughput < 1.2 * lo.throughput;
  if (!tpot_flat || !throughput_flat || !Queueing(lo, hi)) return "";
  return fmt::format("concurrency {} -> {}: per-token time and throughput stay flat while TTFT grows {} -> {}: the "
                     "engine runs no more requests at once; a concurrency cap (max_num_seqs?) is queueing requests",
                     lo.label, hi.label, FormatDuration(lo.ttft.p50), FormatDuration(hi.ttft.p50));
}

}  // namespace

std::vector<std::string> Diagnose(const std::vector<PointResult>& points, double lag_threshold_s) {
  Notes notes;
  for (const PointResult& p : points) {
    if (p.failed > 0) notes.Add(p.label, fmt::format("{:g} failed requests per run, e.g. {}", p.failed, p.top_error));
    if (p.send_lag_p99 > lag_threshold_s) {
      notes.Add(p.label, fmt::format("client send lag p99 {} > {}: the client was late, the point is not trustworthy",
                                     FormatDuration(p.send_lag_p99), FormatDuration(lag_threshold_s)));
    }
    for (const std::string& n : p.request_notes) notes.Add(p.label, n);
    if (p.saturation.saturated) {
      notes.Add(p.label, fmt::format("not sustainable: {}; the queue grows for as long as the load lasts, so its "
                                     "latencies depend on the run's length",
                                     p.saturation.Evidence()));
    }
    if (p.host_others_share && *p.host_others_share > kBusyHostShare) {
      notes.Add(p.label, fmt::format("measured on a busy host: other processes took more than {:.0f}% of its CPU time, "
                                     "so the figures read low (measure on a quiet machine)",
                                     100 * kBusyHostShare));
    }
    if (p.usage_mismatch > 0) {
      notes.Add(p.label, "some requests' usage disagrees with their counted chunks (a chunk without text, or "
                         "several tokens per chunk); TPOT uses usage");
    }
  }
  for (size_t i = 1; i < points.size(); ++i) {
    const PointResult &lo = points[i - 1], &hi = points[i];
    if (hi.throughput > lo.throughput * 1.02 && hi.goodput < lo.goodput * 0.98) {
      notes.AddGeneral(
          fmt::format("load {} -> {}: throughput rises while goodput falls: past the knee", lo.label, hi.label));
    }
  }
  if (points.size() >= 3 && points.front().tpot.p50 > 0 && points.back().load.kind == ArrivalKind::kClosedLoop &&
      points.back().load.concurrency >= 8 * points.front().load.concurrency &&
      points.back().tpot.p50 < 1.1 * points.front().tpot.p50 && !Queueing(points.front(), points.back())) {
    notes.AddGeneral("per-token time stays flat while concurrency rises 8x or more: the engine is not the bottleneck "
                     "(you may be measuring client or network overhead)");
  }
  if (const std::string cap = SeatCap(points); !cap.empty()) notes.AddGeneral(cap);
  return notes.Lines();
}

std::optional<int64_t> KvTokensFromStartupLog(const std::string& startup) {
  const std::string key = "GPU KV cache size: ";
  const size_t at = startup.find(key);
  if (at == std::string::npos) return std::nullopt;
  int64_t n = 0;
  bool any = false;
  for (size_t i = at + key.size(); i < startup.size() && (std::isdigit(startup[i]) || startup[i] == ','); ++i) {
    if (startup[i] == ',') continue;
    n = n * 10 + (startup[i] - '0');
    any = true;
  }
  return any ? std::optional<int64_t>(n) : std::nullopt;
}

std::string MaxNumSeqsAdvice(int64_t kv_tokens, const Workload& w, const PointResult& capacity) {
  if (capacity.load.kind != ArrivalKind::kClosedLoop) return "";
  int64_t p99_len = 1;
  for (const auto& c : w.classes) p99_len = std::max(p99_len, c.prompt.Quantile(0.99) + c.output.Quantile(0.99));
  const int64_t planner = kv_tokens / p99_len;
  const int64_t measured = capacity.load.concurrency;
  return fmt::format(
      "max_num_seqs: planner {} (the KV pool's {} tokens / {} tokens per p99-length request); measured {} (the "
      "highest concurrency that holds the SLO); recommended {}\n",
      FormatCount(planner), FormatCount(kv_tokens), FormatCount(p99_len), measured, std::min(planner, measured));
}

}  // namespace goodput
