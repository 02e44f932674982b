#include "measure/point.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include <fmt/format.h>

#include "core/stats.h"
#include "core/units.h"
#include "workload/day_profile.h"

namespace goodput {
namespace {

double Med(std::vector<double> v) { return v.empty() ? 0 : *Median(std::move(v)); }

// The latencies of the measured, successful requests of classes with targets
// (of every class when none has one), pooled over the runs.
struct Latencies {
  std::vector<double> ttft, tpot, itl, e2e;
};

void AddLatencies(const Workload& w, const MeasuredRun& run, Latencies& out) {
  bool any_slo = false;
  for (const auto& c : w.classes) any_slo = any_slo || c.slo.has_value();
  // About one gap a chunk received (a server's claimed token count would let it ask for any size).
  size_t gaps = out.itl.size();
  for (const auto& r : run.records) gaps += r.chunks.size();
  out.itl.reserve(gaps);
  for (const auto& r : run.records) {
    if (!r.ok || r.t_arrival < run.window.start || r.t_arrival >= run.window.end) continue;
    const int idx = w.ClassIndex(r.request_class);
    if (any_slo && (idx < 0 || !w.classes[idx].slo)) continue;
    if (auto v = Ttft(r)) out.ttft.push_back(*v);
    if (auto v = Tpot(r)) out.tpot.push_back(*v);
    if (auto v = E2e(r)) out.e2e.push_back(*v);
    AppendItls(r, out.itl);
  }
}

void SummariseHealth(const std::vector<MeasuredRun>& runs, PointResult& p) {
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
  for (const auto& [text, n] : notes)
    p.request_notes.push_back(fmt::format("{} ({} request{})", text, n, n == 1 ? "" : "s"));
}

// The margin of class `name` under `slo` over the measured successful
// requests of `runs` (ClassAttainment::slo_margin), and its target.
std::pair<double, std::string> SloMargin(const std::string& name, const ClassSlo& slo,
                                         const std::vector<MeasuredRun>& runs) {
  double margin = kNoValue;
  std::string worst;
  for (const SloTarget& t : slo.targets) {
    std::vector<double> values;
    for (const MeasuredRun& run : runs) {
      for (const RequestRecord& r : run.records) {
        const bool judged = r.t_arrival >= run.window.start && r.t_arrival < run.window.end;
        if (!r.ok || r.request_class != name || !judged) continue;
        if (auto v = SloMetricValue(r, t.metric)) values.push_back(*v);
      }
    }
    const auto value = Percentile(std::move(values), t.percentile);
    if (!value) continue;
    const double m = 1 - *value / t.threshold_s;
    if (!std::isnan(margin) && m >= margin) continue;
    margin = m;
    worst = fmt::format("{} p{:g} {} (target {})", SloMetricName(t.metric), t.percentile, FormatDuration(*value),
                        FormatDuration(t.threshold_s));
  }
  return {margin, worst};
}

void AddSloMargins(const Workload& w, const std::vector<MeasuredRun>& runs, PointResult& p) {
  const SloSpec slo = w.Slo();
  for (ClassAttainment& c : p.classes) {
    const ClassSlo* s = c.has_slo ? slo.For(c.class_name) : nullptr;
    if (!s) continue;
    std::tie(c.slo_margin, c.slo_worst) = SloMargin(c.class_name, *s, runs);
    if (std::isnan(c.slo_margin)) continue;
    p.slo_margin = std::isnan(p.slo_margin) ? c.slo_margin : std::min(p.slo_margin, c.slo_margin);
  }
}

// Per class: counts pooled over the runs (with a windowed SLO also per
// window, in c.window_counts), throughput per run.
struct ClassTally {
  ClassAttainment c;
  std::vector<double> throughput;
};

// Adds a run's requests of a windowed class to its tally, by window. Only
// whole windows count (a shorter last one would be judged on too few
// requests); a measurement window shorter than one window is one window.
void TallyWindows(const MeasuredRun& run, const ClassSlo& slo, double width, ClassTally& t) {
  const Window& w = run.window;
  const auto whole = static_cast<size_t>(w.seconds() / width);
  for (const RequestRecord& r : run.records) {
    if (r.request_class != t.c.class_name || r.t_arrival < w.start || r.t_arrival >= w.end) continue;
    const auto k = whole == 0 ? size_t{0} : static_cast<size_t>((r.t_arrival - w.start) / width);
    if (whole > 0 && k >= whole) continue;
    auto& counts = t.c.window_counts;
    if (counts.size() <= k) counts.resize(k + 1);
    counts[k].first += IsGood(r, &slo);
    counts[k].second += 1;
  }
}

// "over peak": the measurement window's window that is the profile's
// busiest step (the windows start at the warm-up's end, a whole number of
// steps: CheckMeasurementSpec).
int PeakWindow(const Workload& w) {
  const double skipped = w.warmup.seconds.value_or(0) / w.profile_step_s;
  return PeakStep(w) - static_cast<int>(std::lround(skipped));
}

// How far a window is from holding, to find the one that decides: a
// failing window before an undecided one before one that holds, then the
// lower attainment less required, then the fewer requests.
std::tuple<int, double, int64_t> WindowRank(int64_t good, int64_t total, double required) {
  const Verdict v = JudgeAttainment(good, total, required);
  const int order = v == Verdict::kFails ? 0 : v == Verdict::kHolds ? 2 : 1;
  const double margin = total > 0 ? static_cast<double>(good) / static_cast<double>(total) - required : -1;
  return {order, margin, total};
}

// A windowed class judged by its windows: it holds only if every window
// with a request of the class holds (one without has nothing to judge); the
// counts shown are the deciding window's (WindowRank).
void JudgeWindows(ClassAttainment& c) {
  const auto& counts = c.window_counts;
  for (size_t k = 0; k < counts.size(); ++k) {
    const auto [good, total] = counts[k];
    if (total == 0 || (c.judged_window >= 0 && static_cast<int>(k) != c.judged_window)) continue;
    const auto& [worst_good, worst_total] = counts[static_cast<size_t>(std::max(c.worst_window, 0))];
    if (c.worst_window < 0 || WindowRank(good, total, c.required) < WindowRank(worst_good, worst_total, c.required))
      c.worst_window = static_cast<int>(k);
  }
  if (c.worst_window < 0 && c.judged_window >= 0) {  // the peak step saw no request: nothing to judge it by
    c.good = c.total = 0;
    c.verdict = Verdict::kNoData;
    return;
  }
  if (c.worst_window < 0) return;  // no request arrived: the whole window's counts stand
  std::tie(c.good, c.total) = counts[static_cast<size_t>(c.worst_window)];
  c.verdict = JudgeAttainment(c.good, c.total, c.required);
}

void Judge(const Workload& w, std::map<std::string, ClassTally>& tallies, PointResult& p) {
  bool undecided = false, fails = false;
  for (auto& [name, t] : tallies) {
    ClassAttainment& c = t.c;
    const int idx = w.ClassIndex(name);
    c.offline = idx >= 0 && w.classes[idx].offline;
    c.throughput = Med(t.throughput);
    if (c.total > 0) c.attainment = static_cast<double>(c.good) / static_cast<double>(c.total);
    c.interval = WilsonInterval(c.good, c.total, kVerdictConfidence);
    if (c.has_slo) {
      c.min_requests = MinTrialsToShow(c.required, kVerdictConfidence);
      c.verdict = JudgeAttainment(c.good, c.total, c.required);
      if (c.window_s > 0) JudgeWindows(c);
      c.attainment = c.total > 0 ? static_cast<double>(c.good) / static_cast<double>(c.total) : kNoValue;
      c.interval = WilsonInterval(c.good, c.total, kVerdictConfidence);
      fails = fails || c.verdict == Verdict::kFails;
      undecided = undecided || c.verdict == Verdict::kUndecided || c.verdict == Verdict::kNoData;
    }
    p.classes.push_back(c);
  }
  p.verdict = fails ? Verdict::kFails : undecided ? Verdict::kUndecided : Verdict::kHolds;
}

}  // namespace

const char* VerdictName(Verdict v) {
  switch (v) {
    case Verdict::kHolds: return "holds";
    case Verdict::kFails: return "fails";
    case Verdict::kUndecided: return "undecided";
    case Verdict::kNoData: return "no data";
  }
  return "?";
}

std::string WindowText(const ClassAttainment& c) {
  if (c.window_s <= 0 || c.worst_window < 0) return "";
  const double from = c.worst_window * c.window_s;
  return fmt::format("window {} of {} ({:g}-{:g} s into the measurement window{})", c.worst_window + 1,
                     c.window_counts.size(), from, from + c.window_s, c.judged_window >= 0 ? ", the peak step" : "");
}

Verdict JudgeAttainment(int64_t good, int64_t total, double required) {
  if (total <= 0) return Verdict::kNoData;
  if (required >= 1) return good == total ? Verdict::kHolds : Verdict::kFails;
  const Interval i = WilsonInterval(good, total, kVerdictConfidence);
  if (i.lower >= required) return Verdict::kHolds;
  if (i.upper < required) return Verdict::kFails;
  return Verdict::kUndecided;
}

const std::vector<double> kDistributionPercentiles = {0,  1,  5,  10, 15, 20, 25, 30, 35, 40, 45, 50,
                                                     55, 60, 65, 70, 75, 80, 85, 90, 95, 99, 99.9, 100};

LatencyStats SummariseLatency(std::vector<double> values) {
  LatencyStats s;
  s.count = static_cast<int64_t>(values.size());
  if (values.empty()) return s;
  s.mean = *Mean(values);
  // Only the order statistics read below are put in place: a simulated point's ITLs run to millions.
  std::vector<size_t> ranks;
  for (double p : {50.0, 99.0})
    for (size_t i : PercentileIntervalIndices(values.size(), p)) ranks.push_back(i);
  std::vector<double> read = kDistributionPercentiles;
  read.insert(read.end(), {50, 90, 99});  // the three below (in the distribution too; kept apart so they stay right)
  for (double p : read) {
    const auto [lo, hi] = PercentileIndices(values.size(), p);
    ranks.push_back(lo), ranks.push_back(hi);
  }
  SelectRanks(values, std::move(ranks));
  s.p50_interval = PercentileIntervalOfSorted(values, 50);
  s.p99_interval = PercentileIntervalOfSorted(values, 99);
  for (double p : kDistributionPercentiles) s.distribution.emplace_back(p, PercentileOfSorted(values, p));
  s.p50 = PercentileOfSorted(values, 50);
  s.p90 = PercentileOfSorted(values, 90);
  s.p99 = PercentileOfSorted(values, 99);
  return s;
}

double ReplicaImbalance(const PointResult& p) {
  double total = 0, busiest = 0, count = 0;
  for (const ReplicaCounts& r : p.replicas) {
    if (r.prefill) continue;  // a disaggregated fleet's decode pool; its prefill pool sees the same requests
    total += r.requests, busiest = std::max(busiest, r.requests), ++count;
  }
  return total > 0 ? busiest / (total / count) : 1;
}

std::string LoadLabel(const ArrivalSpec& load) {
  if (load.kind == ArrivalKind::kClosedLoop) return fmt::format("{}", load.concurrency);
  if (load.kind == ArrivalKind::kTrace) return "trace";
  if (load.kind == ArrivalKind::kBatch) return "batch";
  if (load.kind == ArrivalKind::kProfile) return "profile";
  return fmt::format("{:g}/s", load.rate);
}

PointResult Summarise(const Workload& w, const ArrivalSpec& load, const std::vector<MeasuredRun>& runs) {
  PointResult p;
  p.load = load;
  p.label = LoadLabel(load);
  p.repeats = static_cast<int>(runs.size());
  const SloSpec slo = w.Slo();
  std::vector<double> thr, rate, good, good_tok, pre, rej, steps;
  std::map<std::string, ClassTally> tallies;
  Latencies lat;
  HostCpuUse host;
  std::vector<Saturation> saturation;
  const bool open_loop = load.kind == ArrivalKind::kPoisson || load.kind == ArrivalKind::kGamma ||
                         load.kind == ArrivalKind::kTrace || load.kind == ArrivalKind::kProfile;
  for (const MeasuredRun& run : runs) {
    const SloReport rep = Evaluate(run.records, slo, run.window);
    saturation.push_back(RunSaturation(run.records, run.window, open_loop));
    thr.push_back(rep.output_throughput);
    rate.push_back(rep.request_throughput);
    good.push_back(rep.goodput);
    good_tok.push_back(rep.goodput_tokens);
    pre.push_back(run.engine.preemptions ? static_cast<double>(*run.engine.preemptions) : kNoValue);
    rej.push_back(static_cast<double>(run.engine.rejected));
    steps.push_back(static_cast<double>(run.engine.steps));
    AddLatencies(w, run, lat);
    if (const auto& sd = run.engine.spec_decode) (p.spec_decode ? *p.spec_decode : p.spec_decode.emplace()) += *sd;
    if (const auto& pc = run.engine.prefix_cache) (p.prefix_cache ? *p.prefix_cache : p.prefix_cache.emplace()) += *pc;
    if (p.replicas.size() < run.engine.replicas.size()) p.replicas.resize(run.engine.replicas.size());
    for (size_t k = 0; k < run.engine.replicas.size(); ++k) p.replicas[k] += run.engine.replicas[k];
    if (run.host_cpu) {
      host.others_s += run.host_cpu->others_s;
      host.total_s += run.host_cpu->total_s;
    }
    const double secs = run.window.seconds();
    for (const ClassReport& c : rep.classes) {
      ClassTally& t = tallies[c.class_name];
      t.c.class_name = c.class_name;
      t.c.has_slo = c.has_slo;
      t.c.required = c.required;
      t.c.total += c.total;
      t.c.good += c.good;
      t.throughput.push_back(secs > 1e-9 ? c.output_tokens / secs : 0);
      const ClassSlo* s = c.has_slo ? slo.For(c.class_name) : nullptr;
      // ("over peak" without a profile has no window: CheckMeasurementSpec refuses it.)
      if (s && (s->window_s > 0 || (s->peak && w.HasProfile()))) {
        t.c.window_s = s->peak ? w.profile_step_s : s->window_s;
        if (s->peak) t.c.judged_window = PeakWindow(w);
        TallyWindows(run, *s, t.c.window_s, t);
      }
    }
  }
  p.host_others_share = OthersCpuShare(host);
  p.throughput = Med(thr);
  p.request_rate = Med(rate);
  p.goodput = Med(good);
  p.goodput_tokens = Med(good_tok);
  p.ttft = SummariseLatency(std::move(lat.ttft));
  p.tpot = SummariseLatency(std::move(lat.tpot));
  p.itl = SummariseLatency(std::move(lat.itl));
  p.e2e = SummariseLatency(std::move(lat.e2e));
  p.per_request_speed = p.tpot.p50 > 0 ? 1.0 / p.tpot.p50 : kNoValue;
  // Unknown when any run's target could not see them.
  p.preemptions = std::any_of(pre.begin(), pre.end(), [](double x) { return std::isnan(x); }) ? kNoValue : Med(pre);
  p.rejected = Med(rej);
  p.steps = Med(steps);
  if (p.throughput > 0 && !thr.empty()) {
    p.throughput_spread = (*std::max_element(thr.begin(), thr.end()) - *std::min_element(thr.begin(), thr.end())) /
                          p.throughput;
  }
  SummariseHealth(runs, p);
  Judge(w, tallies, p);
  p.saturation = PoolSaturation(saturation);
  if (p.saturation.saturated) p.verdict = Verdict::kFails;
  AddSloMargins(w, runs, p);
  return p;
}

}  // namespace goodput
