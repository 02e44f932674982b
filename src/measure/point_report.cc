#include "measure/point_report.h"

#include <algorithm>
#include <cmath>

#include <boost/json.hpp>
#include <fmt/format.h>

#include "core/text.h"
#include "core/units.h"
#include "measure/diagnose.h"

namespace goodput {

std::string FormatPointTable(const std::vector<PointResult>& points) {
  if (points.empty()) return "";
  const bool closed = points[0].load.kind == ArrivalKind::kClosedLoop;
  std::string head = fmt::format("{:>12}{:>12}{:>13}{:>11}{:>11}{:>11}{:>11}", closed ? "concurrency" : "rate",
                                 "throughput", "per-request", "TTFT p50", "TTFT p99", "TPOT p50", "TPOT p99");
  std::string units = fmt::format("{:>12}{:>12}{:>13}{:>11}{:>11}{:>11}{:>11}", "", "tok/s", "tok/s", "", "", "", "");
  for (const auto& c : points[0].classes) {
    if (!c.has_slo) continue;
    head += fmt::format("{:>14}", c.class_name);
    units += fmt::format("{:>14}", "attainment");
  }
  head += fmt::format("{:>10}{:>8}{:>8}  {}", "goodput", "spread", "preempt", "verdict");
  units += fmt::format("{:>10}", "req/s");
  std::string s = head + "\n" + units + "\n";
  for (const auto& p : points) {
    s += fmt::format("{:>12}{:>12.0f}{:>13.1f}{:>11}{:>11}{:>11}{:>11}", p.label, p.throughput, p.per_request_speed,
                     FormatDuration(p.ttft_p50), FormatDuration(p.ttft_p99), FormatDuration(p.tpot_p50),
                     FormatDuration(p.tpot_p99));
    for (const auto& c : p.classes) {
      if (c.has_slo) s += fmt::format("{:>13.1f}%", 100 * c.attainment);
    }
    s += fmt::format("{:>10.2f}{:>7.1f}%{:>8.0f}  {}\n", p.goodput, 100 * p.throughput_spread, p.preemptions,
                     p.holds ? "holds" : "fails");
  }
  return s;
}

boost::json::value PointToJson(const PointResult& p) {
  // JSON has no NaN or infinity: a figure that could not be measured is null.
  const auto num = [](double x) { return std::isfinite(x) ? boost::json::value(x) : boost::json::value(nullptr); };
  boost::json::array classes;
  for (const auto& c : p.classes) {
    classes.push_back(boost::json::object{{"class", c.class_name},
                                          {"has_slo", c.has_slo},
                                          {"attainment", num(c.attainment)},
                                          {"required", num(c.required)},
                                          {"holds", c.holds}});
  }
  return boost::json::object{{"load", p.label},
                             {"arrival", ArrivalKindName(p.load.kind)},
                             {"concurrency", p.load.concurrency},
                             {"rate", p.load.rate},
                             {"repeats", p.repeats},
                             {"throughput_tokens_per_s", num(p.throughput)},
                             {"requests_per_s", num(p.request_rate)},
                             {"per_request_tokens_per_s", num(p.per_request_speed)},
                             {"ttft_p50_s", num(p.ttft_p50)},
                             {"ttft_p99_s", num(p.ttft_p99)},
                             {"tpot_p50_s", num(p.tpot_p50)},
                             {"tpot_p99_s", num(p.tpot_p99)},
                             {"goodput_requests_per_s", num(p.goodput)},
                             {"goodput_tokens_per_s", num(p.goodput_tokens)},
                             {"throughput_spread", num(p.throughput_spread)},
                             {"preemptions", num(p.preemptions)},
                             {"rejected", num(p.rejected)},
                             {"steps", num(p.steps)},
                             {"classes", classes},
                             {"holds", p.holds},
                             {"failed", num(p.failed)},
                             {"send_lag_p99_s", num(p.send_lag_p99)},
                             {"usage_mismatch", num(p.usage_mismatch)},
                             {"request_notes", boost::json::value_from(p.request_notes)}};
}

std::string FormatCapacity(const std::vector<PointResult>& points, std::optional<size_t> capacity, bool capped) {
  if (points.empty()) return "";
  const std::string unit = points[0].load.kind == ArrivalKind::kClosedLoop ? "concurrency" : "request rate";
  if (!capacity) return fmt::format("capacity: none: every class's SLO already fails at {} {}\n", unit, points[0].label);
  const PointResult& p = points[*capacity];
  return fmt::format("capacity: {} {} ({:.0f} tok/s, goodput {:.2f} req/s){}\n", unit, p.label, p.throughput, p.goodput,
                     capped ? ", still holding at the highest load tried" : "");
}

namespace {

// max_num_seqs two ways, when the target reported its KV capacity and a
// closed-loop capacity was found.
std::string Advice(const SettingResult& r, const Workload& w) {
  const auto kv = KvTokensFromStartupLog(r.kv_capacity);
  const auto& cap = r.sweep.capacity;
  if (!kv || !cap) return "";
  return MaxNumSeqsAdvice(*kv, w, r.sweep.points[*cap]);
}

double GoodputAtCapacity(const SettingResult& r) {
  return r.sweep.capacity ? r.sweep.points[*r.sweep.capacity].goodput : 0;
}

std::string Ranking(std::vector<SettingResult> results) {
  std::stable_sort(results.begin(), results.end(), [](const SettingResult& x, const SettingResult& y) {
    return GoodputAtCapacity(x) > GoodputAtCapacity(y);
  });
  std::string s = fmt::format("Settings ranked by goodput at capacity\n  {:<32}{:>12}{:>16}{:>18}\n", "setting",
                              "capacity", "goodput req/s", "throughput tok/s");
  for (const auto& r : results) {
    const PointResult* c = r.sweep.capacity ? &r.sweep.points[*r.sweep.capacity] : nullptr;
    s += fmt::format("  {:<32}{:>12}{:>16.2f}{:>18.0f}\n", r.setting, c ? c->label : "none", c ? c->goodput : 0.0,
                     c ? c->throughput : 0.0);
  }
  return s;
}

}  // namespace

std::string FormatResults(const std::vector<SettingResult>& results, const Workload& w, int repeat,
                          double lag_threshold_s) {
  const SloSpec slo = w.Slo();
  std::string s;
  for (const SettingResult& r : results) {
    if (!r.setting.empty()) s += "=== " + r.setting + " ===\n";
    s += fmt::format("target: {}\nworkload {} ({} requests per run, {} run{} per load), SLO: {}\n", r.target, w.name,
                     w.requests, repeat, repeat == 1 ? "" : "s", slo.empty() ? std::string("none") : slo.ToString());
    for (const std::string& line : Split(r.kv_capacity, '\n')) {
      if (!line.empty()) s += "engine: " + line + "\n";
    }
    s += "\n" + FormatPointTable(r.sweep.points) + "\n" +
         FormatCapacity(r.sweep.points, r.sweep.capacity, r.sweep.capped) + Advice(r, w);
    for (const auto& n : Diagnose(r.sweep.points, lag_threshold_s)) s += "note: " + n + "\n";
    s += "\n";
  }
  if (results.size() > 1) s += Ranking(results);
  return s;
}

boost::json::value ResultsToJson(const std::vector<SettingResult>& results) {
  boost::json::array out;
  for (const auto& r : results) {
    boost::json::array points;
    for (const auto& p : r.sweep.points) points.push_back(PointToJson(p));
    const auto& cap = r.sweep.capacity;
    out.push_back(boost::json::object{
        {"setting", r.setting},
        {"target", r.target},
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
                       p.request_rate, p.per_request_speed, p.ttft_p50, p.ttft_p99, p.tpot_p50, p.tpot_p99, p.goodput,
                       p.goodput_tokens, p.throughput_spread, p.failed, p.send_lag_p99, p.holds ? 1 : 0,
                       r.sweep.capacity == i ? 1 : 0);
    }
  }
  return s;
}

}  // namespace goodput
