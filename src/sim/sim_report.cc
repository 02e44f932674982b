#include "sim/sim_report.h"

#include <cmath>

#include <boost/json.hpp>
#include <fmt/format.h>

#include "core/units.h"

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
                             {"usage_mismatch", num(p.usage_mismatch)}};
}

std::string FormatCapacity(const std::vector<PointResult>& points, std::optional<size_t> capacity, bool capped) {
  if (points.empty()) return "";
  const std::string unit = points[0].load.kind == ArrivalKind::kClosedLoop ? "concurrency" : "request rate";
  if (!capacity) return fmt::format("capacity: none: every class's SLO already fails at {} {}\n", unit, points[0].label);
  const PointResult& p = points[*capacity];
  return fmt::format("capacity: {} {} ({:.0f} tok/s, goodput {:.2f} req/s){}\n", unit, p.label, p.throughput, p.goodput,
                     capped ? ", still holding at the highest load tried" : "");
}

}  // namespace goodput
