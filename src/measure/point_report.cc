#include "measure/point_report.h"

#include <algorithm>
#include <cmath>

#include <boost/json.hpp>
#include <fmt/format.h>

#include "core/text.h"
#include "core/units.h"
#include "measure/diagnose.h"
#include "measure/point_json.h"
#include "measure/ranking.h"
#include "workload/day_profile.h"

namespace goodput {

std::string AttainmentCell(const ClassAttainment& c) {
  if (c.total == 0) return "no data";
  return fmt::format("{:.1f}% [{:.1f},{:.1f}] n={}", 100 * c.attainment, 100 * c.interval.lower,
                     100 * c.interval.upper, c.total);
}

namespace {

// Milliseconds with three significant figures; "-" when not measured.
std::string Ms(double seconds) {
  if (!std::isfinite(seconds)) return "-";
  const double ms = seconds * 1e3;
  return ms >= 100 ? fmt::format("{:.0f}", ms) : ms >= 10 ? fmt::format("{:.1f}", ms) : fmt::format("{:.2f}", ms);
}

std::string LatencyCell(const LatencyStats& s) {
  if (s.count == 0) return "-";
  return Ms(s.p50) + " / " + Ms(s.p90) + " / " + Ms(s.p99) + " / " + Ms(s.mean);
}

std::string Number(double x, int decimals) {
  return std::isfinite(x) ? fmt::format("{:.{}f}", x, decimals) : "-";
}

}  // namespace

std::string FormatPointTable(const std::vector<PointResult>& points) {
  if (points.empty()) return "";
  const bool closed = points[0].load.kind == ArrivalKind::kClosedLoop;
  std::string head = fmt::format("{:>12}{:>12}{:>13}{:>11}{:>11}{:>11}{:>11}", closed ? "concurrency" : "load",
                                 "throughput", "per-request", "TTFT p50", "TTFT p99", "TPOT p50", "TPOT p99");
  std::string units = fmt::format("{:>12}{:>12}{:>13}{:>11}{:>11}{:>11}{:>11}", "", "tok/s", "tok/s", "", "", "", "");
  for (const auto& c : points[0].classes) {
    if (!c.has_slo) continue;
    head += fmt::format("  {:<28}", c.class_name + " attainment");
    units += fmt::format("  {:<28}", "(95% interval, requests)");
  }
  for (const auto& c : points[0].classes) {  // offline work and classes without an SLO: what they got
    if (c.has_slo) continue;
    head += fmt::format("  {:<20}", c.class_name + (c.offline ? " (offline)" : " (no SLO)"));
    units += fmt::format("  {:<20}", "tok/s, requests");
  }
  head += fmt::format("{:>10}{:>8}{:>8}{:>6}  {}", "goodput", "spread", "preempt", "runs", "verdict");
  units += fmt::format("{:>10}", "req/s");
  std::string s = head + "\n" + units + "\n";
  for (const auto& p : points) {
    s += fmt::format("{:>12}{:>12.0f}{:>13}{:>11}{:>11}{:>11}{:>11}", p.label, p.throughput,
                     Number(p.per_request_speed, 1), FormatDuration(p.ttft.p50), FormatDuration(p.ttft.p99),
                     FormatDuration(p.tpot.p50), FormatDuration(p.tpot.p99));
    for (const auto& c : p.classes) {
      if (c.has_slo) s += fmt::format("  {:<28}", AttainmentCell(c));
    }
    for (const auto& c : p.classes) {
      if (!c.has_slo) s += fmt::format("  {:<20}", fmt::format("{:.0f} n={}", c.throughput, c.total));
    }
    s += fmt::format("{:>10.2f}{:>7.1f}%{:>8}{:>6}  {}\n", p.goodput, 100 * p.throughput_spread,
                     Number(p.preemptions, 0), p.repeats, p.verdict_text());
  }
  return s;
}

std::string FormatLatencyTable(const std::vector<PointResult>& points) {
  if (points.empty()) return "";
  const bool closed = points[0].load.kind == ArrivalKind::kClosedLoop;
  // Each column as wide as its widest cell (seconds-long latencies in ms
  // once ran into the next column).
  size_t ttft = 26, tpot = 26, itl = 26;
  for (const auto& p : points) {
    ttft = std::max(ttft, LatencyCell(p.ttft).size());
    tpot = std::max(tpot, LatencyCell(p.tpot).size());
    itl = std::max(itl, LatencyCell(p.itl).size());
  }
  std::string s = "latency in ms over the measured requests, p50 / p90 / p99 / mean\n";
  const auto row = [&](const std::string& load, const std::string& a, const std::string& b, const std::string& c,
                       const std::string& d) {
    return fmt::format("{:>12}  {:<{}}  {:<{}}  {:<{}}  {}\n", load, a, ttft, b, tpot, c, itl, d);
  };
  s += row(closed ? "concurrency" : "load", "TTFT", "TPOT", "ITL", "E2E");
  for (const auto& p : points) {
    s += row(p.label, LatencyCell(p.ttft), LatencyCell(p.tpot), LatencyCell(p.itl), LatencyCell(p.e2e));
  }
  return s;
}

std::string FormatSpecDecode(const std::vector<PointResult>& points) {
  std::string s;
  for (const PointResult& p : points) {
    if (!p.spec_decode) continue;
    if (s.empty()) {
      s = "speculative decoding, in vLLM's terms (acceptance = accepted / proposed drafts; mean acceptance length = "
          "tokens per verifying step)\n";
    }
    s += fmt::format("{:>12}  acceptance {:.1f}%, mean acceptance length {:.2f} ({:.0f} drafts)\n", p.label,
                     100 * p.spec_decode->acceptance(), p.spec_decode->mean_acceptance_length(), p.spec_decode->drafts);
  }
  return s;
}

std::string FormatPrefixCache(const std::vector<PointResult>& points) {
  // Every vLLM V1 engine caches prefixes: a section of 0% rows would follow
  // every table of distinct prompts (the JSON keeps them).
  if (std::none_of(points.begin(), points.end(),
                   [](const PointResult& p) { return p.prefix_cache && p.prefix_cache->hits > 0; }))
    return "";
  std::string s;
  for (const PointResult& p : points) {
    if (!p.prefix_cache) continue;
    if (s.empty()) s = "prefix cache, in vLLM's terms (hit rate = prompt tokens found / looked up, over all runs)\n";
    s += fmt::format("{:>12}  hit rate {:.1f}% ({:.0f} of {:.0f} tokens)\n", p.label, 100 * p.prefix_cache->hit_rate(),
                     p.prefix_cache->hits, p.prefix_cache->queries);
  }
  return s;
}

std::string FormatReplicas(const std::vector<PointResult>& points) {
  std::string s;
  for (const PointResult& p : points) {
    if (p.replicas.size() < 2) continue;
    if (s.empty()) s = "replicas: each one's share of the requests (busiest / mean), and its prefix-cache hit rate\n";
    double total[2] = {0, 0};  // decode (or aggregated) instances, prefill instances: each pool sees every request
    for (const ReplicaCounts& r : p.replicas) total[r.prefill] += r.requests;
    std::string shares, hits;
    bool cached = false;
    for (const ReplicaCounts& r : p.replicas) {
      const double share = total[r.prefill] > 0 ? 100 * r.requests / total[r.prefill] : 0.0;
      shares += fmt::format("{}{}{:.1f}%", shares.empty() ? "" : " ", r.prefill ? "P " : "", share);
      hits += fmt::format("{}{:.1f}%", hits.empty() ? "" : " ", 100 * r.prefix_cache.hit_rate());
      cached = cached || r.prefix_cache.queries > 0;
    }
    s += fmt::format("{:>12}  {} ({:.2f}){}\n", p.label, shares, ReplicaImbalance(p),
                     cached ? "; hit rate " + hits : "");
  }
  return s;
}

std::string WindowVerdicts(const ClassAttainment& c) {
  std::string letters;
  for (const auto& [good, total] : c.window_counts) {
    const Verdict v = JudgeAttainment(good, total, c.required);
    letters += v == Verdict::kHolds ? 'h' : v == Verdict::kFails ? 'f' : v == Verdict::kNoData ? '-' : 'u';
  }
  return letters;
}

std::string FormatSloWindows(const std::vector<PointResult>& points) {
  std::string s;
  for (const PointResult& p : points) {
    for (const ClassAttainment& c : p.classes) {
      const std::string window = WindowText(c);
      if (window.empty()) continue;
      if (s.empty())
        s = "SLO windows: a class holds only in every window; the one that decides, and each window's\n"
            "verdict in order (h holds, f fails, u undecided, - no request)\n";
      s += fmt::format("{:>12}  {}: {}: {:.1f}% [{:.1f},{:.1f}] n={}, {}; by window: {}\n", p.label, c.class_name,
                       window, 100 * c.attainment, 100 * c.interval.lower, 100 * c.interval.upper, c.total,
                       VerdictName(c.verdict), WindowVerdicts(c));
    }
  }
  return s;
}

namespace {

// Why the point after the capacity does not hold: its failing (else
// undecided) class with the figures behind the verdict.
std::string WhyNot(const PointResult& p, const std::string& unit) {
  if (p.saturation.saturated) {
    return fmt::format("  at {} {}: not sustainable: {}\n", unit, p.label, p.saturation.Evidence());
  }
  const ClassAttainment* worst = nullptr;
  for (const auto& c : p.classes) {
    if (!c.has_slo || c.holds()) continue;
    if (!worst || (c.verdict == Verdict::kFails && worst->verdict != Verdict::kFails)) worst = &c;
  }
  if (!worst) return "";
  if (worst->verdict == Verdict::kNoData) {
    return fmt::format("  at {} {}: class {} has no measured request\n", unit, p.label, worst->class_name);
  }
  const std::string window = worst->worst_window >= 0 ? " in " + WindowText(*worst) : "";
  std::string why = fmt::format("  at {} {}: {} {}{}: attainment {} measured requests, needs {:g}%", unit, p.label,
                                worst->class_name, VerdictName(worst->verdict), window, AttainmentCell(*worst),
                                100 * worst->required);
  if (worst->verdict == Verdict::kUndecided && worst->total < worst->min_requests) {
    why += fmt::format(" (showing it takes at least {} requests)", worst->min_requests);
  }
  return why + "\n";
}

std::string OfflineLine(const PointResult& p, const std::string& unit) {
  std::string classes;
  for (const auto& c : p.classes) {
    if (c.has_slo) continue;
    classes += fmt::format("{}{} {:.0f} tok/s", classes.empty() ? "" : ", ", c.class_name, c.throughput);
  }
  bool any_slo = false;
  for (const auto& c : p.classes) any_slo = any_slo || c.has_slo;
  if (classes.empty() || !any_slo) return "";
  return fmt::format("  classes without an SLO at {} {}: {}\n", unit, p.label, classes);
}

}  // namespace

std::string FormatCapacity(const std::vector<PointResult>& points, std::optional<size_t> capacity, bool capped) {
  if (points.empty()) return "";
  const std::string unit = points[0].load.kind == ArrivalKind::kClosedLoop ? "concurrency" : "load";
  if (!capacity) return "capacity: none\n" + WhyNot(points[0], unit);
  const PointResult& p = points[*capacity];
  const std::string host =
      p.host_others_share ? fmt::format("; other processes took {:.0f}% of the host's CPU", 100 * *p.host_others_share)
                          : "";
  std::string s = fmt::format("capacity: {} {} ({:.0f} tok/s, goodput {:.2f} req/s{}){}\n", unit, p.label,
                              p.throughput, p.goodput, host, capped ? ", still holding at the highest load tried" : "");
  if (*capacity + 1 < points.size()) s += WhyNot(points[*capacity + 1], unit);
  return s + OfflineLine(p, unit);
}

namespace {

// max_num_seqs two ways, when the target reported its KV capacity and a
// closed-loop capacity was found.
std::string Advice(const SettingResult& r, const Workload& w) {
  const auto kv = KvTokensFromStartupLog(r.startup_lines);
  const auto& cap = r.sweep.capacity;
  if (!kv || !cap) return "";
  return MaxNumSeqsAdvice(*kv, w, r.sweep.points[*cap]);
}

std::string RankingTable(const std::vector<SettingResult>& results) {
  std::vector<SettingScore> scores;
  for (const SettingResult& r : results) scores.push_back(ScoreSweep(r.sweep, r.memory_headroom));
  const Ranking ranked = RankScores(scores);
  const bool judged = !scores.empty() && scores[0].judged;
  std::string s = fmt::format("Settings ranked by {}\n  {:<44}{:>12}{:>16}{:>18}{:>12}  {}\n",
                              judged ? "capacity, then goodput, then SLO margin and memory headroom"
                                     : "served throughput (no class has an SLO)",
                              "setting", "capacity", "goodput req/s", "throughput tok/s", "SLO margin",
                              "above the next by");
  for (size_t k = 0; k < ranked.order.size(); ++k) {
    const SettingResult& r = results[ranked.order[k]];
    const SettingScore& sc = scores[ranked.order[k]];
    const PointResult* c = r.sweep.capacity ? &r.sweep.points[*r.sweep.capacity] : nullptr;
    const std::string margin = std::isnan(sc.slo_margin) ? "-" : fmt::format("{:+.0f}%", 100 * sc.slo_margin);
    s += fmt::format("  {:<44}{:>12}{:>16.2f}{:>18.0f}{:>12}  {}\n", r.setting, judged ? (c ? c->label : "none") : "-",
                     sc.goodput, sc.throughput, margin,
                     k + 1 < ranked.order.size() ? RankCriterionName(ranked.above_next[k]) : "");
  }
  return s;
}

// "2000 requests" a run, or a profile's steps and expected requests.
std::string RunSize(const Workload& w) {
  if (!w.HasProfile()) return fmt::format("{} requests", w.requests);
  return fmt::format("a profile of {} steps of {:g} s, about {:.0f} requests", w.ProfileSteps(), w.profile_step_s,
                     ExpectedProfileRequests(w));
}

// The capacity line; a profile runs at its own rates (no load was searched):
// its verdict instead.
std::string CapacityOrVerdict(const SettingResult& r, const Workload& w) {
  if (!w.HasProfile()) return FormatCapacity(r.sweep.points, r.sweep.capacity, r.sweep.capped);
  return fmt::format("over the profile: {}\n", r.sweep.points.empty() ? "no run" : r.sweep.points[0].verdict_text());
}

}  // namespace

std::string FormatResults(const std::vector<SettingResult>& results, const Workload& w, int repeat, int max_repeat,
                          double lag_threshold_s) {
  const SloSpec slo = w.Slo();
  std::string s;
  for (const SettingResult& r : results) {
    if (!r.setting.empty()) s += "=== " + r.setting + " ===\n";
    s += fmt::format("target: {}\nworkload {} ({} per run, {} run{} per load{}), SLO: {}\n", r.target, w.name,
                     RunSize(w), repeat, repeat == 1 ? "" : "s",
                     max_repeat > repeat ? fmt::format(", up to {} while undecided", max_repeat) : "",
                     slo.empty() ? std::string("none") : slo.ToString());
    for (const std::string& line : Split(r.startup_lines, '\n')) {
      if (!line.empty()) s += "engine: " + line + "\n";
    }
    const std::vector<PointResult>& points = r.sweep.points;
    s += "\n" + FormatPointTable(points) + "\n" + FormatLatencyTable(points) + FormatSpecDecode(points) +
         FormatPrefixCache(points) + FormatReplicas(points) + FormatSloWindows(points) + "\n" +
         CapacityOrVerdict(r, w) + Advice(r, w);
    for (const auto& n : Diagnose(r.sweep.points, lag_threshold_s)) s += "note: " + n + "\n";
    s += "\n";
  }
  if (results.size() > 1) s += RankingTable(results);
  return s;
}

boost::json::value ResultsToJson(const std::vector<SettingResult>& results) {
  boost::json::array out;
  for (const auto& r : results) {
    boost::json::array points;
    for (const auto& p : r.sweep.points) points.push_back(PointToJson(p));
    const auto& cap = r.sweep.capacity;
    boost::json::array engine;  // Target::StartupLines: KV capacity, kernels
    for (const std::string& line : Split(r.startup_lines, '\n')) {
      if (!line.empty()) engine.push_back(boost::json::string(line));
    }
    out.push_back(boost::json::object{
        {"setting", r.setting},
        {"target", r.target},
        {"engine", std::move(engine)},
        {"points", points},
        {"capacity", cap ? boost::json::value(r.sweep.points[*cap].label) : boost::json::value(nullptr)},
        {"capacity_capped", r.sweep.capped}});
  }
  return boost::json::object{{"results", out}};
}

std::string ResultsToCsv(const std::vector<SettingResult>& results) {
  std::string s =
      "setting,load,arrival,concurrency,rate,repeats,throughput_tok_s,requests_s,per_request_tok_s,ttft_p50_s,"
      "ttft_p99_s,tpot_p50_s,tpot_p99_s,goodput_req_s,goodput_tok_s,throughput_spread,failed,send_lag_p99_s,holds,"
      "capacity\n";
  for (const auto& r : results) {
    for (size_t i = 0; i < r.sweep.points.size(); ++i) {
      const PointResult& p = r.sweep.points[i];
      s += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n", r.setting, p.label,
                       ArrivalKindName(p.load.kind), p.load.concurrency, p.load.rate, p.repeats, p.throughput,
                       p.request_rate, p.per_request_speed, p.ttft.p50, p.ttft.p99, p.tpot.p50, p.tpot.p99, p.goodput,
                       p.goodput_tokens, p.throughput_spread, p.failed, p.send_lag_p99, p.holds() ? 1 : 0,
                       r.sweep.capacity == i ? 1 : 0);
    }
  }
  return s;
}

}  // namespace goodput
