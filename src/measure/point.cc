#include "measure/point.h"

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "core/stats.h"

namespace goodput {
namespace {

double Med(std::vector<double> v) { return v.empty() ? 0 : *Median(std::move(v)); }

struct RunFigures {
  double ttft_p50 = 0, ttft_p99 = 0, tpot_p50 = 0, tpot_p99 = 0;
};

// TTFT/TPOT percentiles over the measured, successful requests of classes
// with latency targets (all classes when none has one).
RunFigures Figures(const Workload& w, const MeasuredRun& run) {
  bool any_slo = false;
  for (const auto& c : w.classes) any_slo = any_slo || c.slo.has_value();
  std::vector<double> ttft, tpot;
  for (const auto& r : run.records) {
    if (!r.ok || r.t_arrival < run.window.start || r.t_arrival >= run.window.end) continue;
    const int idx = w.ClassIndex(r.request_class);
    if (any_slo && (idx < 0 || !w.classes[idx].slo)) continue;
    if (auto v = Ttft(r)) ttft.push_back(*v);
    if (auto v = Tpot(r)) tpot.push_back(*v);
  }
  RunFigures f;
  auto t = Percentiles(ttft, {50, 99});
  auto p = Percentiles(tpot, {50, 99});
  f.ttft_p50 = t[0].value_or(0);
  f.ttft_p99 = t[1].value_or(0);
  f.tpot_p50 = p[0].value_or(0);
  f.tpot_p99 = p[1].value_or(0);
  return f;
}

}  // namespace

std::string LoadLabel(const ArrivalSpec& load) {
  if (load.kind == ArrivalKind::kClosedLoop) return fmt::format("{}", load.concurrency);
  if (load.kind == ArrivalKind::kTrace) return "trace";
  return fmt::format("{:g}/s", load.rate);
}

static void SummariseHealth(const std::vector<MeasuredRun>& runs, PointResult& p) {
  std::vector<double> failed, mismatch;
  std::map<std::string, int64_t> reasons, notes;
  for (const MeasuredRun& run : runs) {
    double f = 0, m = 0;
    std::vector<double> lags;
    for (const RequestRecord& r : run.records) {
      lags.push_back(SendLag(r));
      if (!r.ok) {
        ++f;
        ++reasons[r.error];
      }
      if (!r.note.empty()) ++notes[r.note];
      int64_t counted = 0;
      for (const TokenChunk& c : r.chunks) counted += c.tokens;
      if (r.ok && !r.chunks.empty() && counted != r.n_out) ++m;
    }
    failed.push_back(f);
    mismatch.push_back(m);
    if (!lags.empty()) p.send_lag_p99 = std::max(p.send_lag_p99, *Percentile(lags, 99));
  }
  p.failed = Med(failed);
  p.usage_mismatch = Med(mismatch);
  const auto top = std::max_element(reasons.begin(), reasons.end(),
                                    [](const auto& a, const auto& b) { return a.second < b.second; });
  if (top != reasons.end()) p.top_error = top->first + " (x" + std::to_string(top->second) + ")";
  for (const auto& [text, n] : notes) p.request_notes.push_back(fmt::format("{} ({} request{})", text, n, n == 1 ? "" : "s"));
}

PointResult Summarise(const Workload& w, const ArrivalSpec& load, const std::vector<MeasuredRun>& runs) {
  PointResult p;
  p.load = load;
  p.label = LoadLabel(load);
  p.repeats = static_cast<int>(runs.size());
  const SloSpec slo = w.Slo();
  std::vector<double> thr, rate, good, good_tok, t50, t99, p50, p99, pre, rej, steps;
  std::map<std::string, std::vector<double>> attain;
  std::map<std::string, ClassAttainment> cls;
  for (const MeasuredRun& run : runs) {
    const SloReport rep = Evaluate(run.records, slo, run.window);
    thr.push_back(rep.output_throughput);
    rate.push_back(rep.request_throughput);
    good.push_back(rep.goodput);
    good_tok.push_back(rep.goodput_tokens);
    const RunFigures f = Figures(w, run);
    t50.push_back(f.ttft_p50);
    t99.push_back(f.ttft_p99);
    p50.push_back(f.tpot_p50);
    p99.push_back(f.tpot_p99);
    pre.push_back(static_cast<double>(run.engine.preemptions));
    rej.push_back(static_cast<double>(run.engine.rejected));
    steps.push_back(static_cast<double>(run.engine.steps));
    for (const ClassReport& c : rep.classes) {
      cls[c.class_name] = ClassAttainment{c.class_name, c.has_slo, 0, c.required, true};
      attain[c.class_name].push_back(c.attainment.value_or(1.0));
    }
  }
  p.throughput = Med(thr);
  p.request_rate = Med(rate);
  p.goodput = Med(good);
  p.goodput_tokens = Med(good_tok);
  p.ttft_p50 = Med(t50);
  p.ttft_p99 = Med(t99);
  p.tpot_p50 = Med(p50);
  p.tpot_p99 = Med(p99);
  p.per_request_speed = p.tpot_p50 > 0 ? 1.0 / p.tpot_p50 : 0;
  p.preemptions = Med(pre);
  p.rejected = Med(rej);
  p.steps = Med(steps);
  if (p.throughput > 0 && !thr.empty()) {
    p.throughput_spread = (*std::max_element(thr.begin(), thr.end()) - *std::min_element(thr.begin(), thr.end())) /
                          p.throughput;
  }
  SummariseHealth(runs, p);
  for (auto& [name, c] : cls) {
    c.attainment = Med(attain[name]);
    c.holds = !c.has_slo || c.attainment >= c.required;
    p.holds = p.holds && c.holds;
    p.classes.push_back(c);
  }
  return p;
}

}  // namespace goodput
