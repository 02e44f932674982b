#include "measure/fleet_size.h"

#include <algorithm>

#include <boost/json.hpp>
#include <fmt/format.h>

#include "core/units.h"
#include "measure/point_json.h"
#include "measure/point_report.h"

namespace goodput {
namespace {

Status CheckFleetSpec(const MeasurementSpec& spec, int max_replicas) {
  if (spec.loads.size() != 1) {
    return Status::InvalidArgument("a fleet is sized for one load: give one --rate (or --concurrency)");
  }
  if (spec.search_capacity)
    return Status::InvalidArgument("a fleet search sizes the fleet for a load; it is no capacity search");
  if (!spec.vary.empty()) return Status::InvalidArgument("a fleet search varies the replicas itself; drop --vary");
  if (max_replicas < 1) return Status::InvalidArgument("--max-replicas must be at least 1");
  return Status::Ok();
}

}  // namespace

Result<FleetSize> SearchFleetSize(const MeasurementSpec& spec, int max_replicas, int gpus_per_replica,
                                  const TargetFactory& make_target, const MeasurementHooks& hooks) {
  GOODPUT_RETURN_IF_ERROR(CheckFleetSpec(spec, max_replicas));
  FleetSize out;
  out.gpus_per_replica = gpus_per_replica;
  out.max_replicas = max_replicas;
  const auto probe = [&](int n) -> Result<bool> {
    MeasurementSpec one = spec;
    one.vary = {Vary{"replicas", {std::to_string(n)}}};
    GOODPUT_ASSIGN_OR_RETURN(std::vector<SettingResult> r, Measure(one, make_target, hooks));
    out.probes.push_back(FleetProbe{n, r.at(0).target, r.at(0).sweep.points.at(0)});
    return out.probes.back().point.holds();
  };
  int fails = 0, holds = 0;  // the most replicas known to fail, the fewest known to hold (0: none yet)
  for (int n = 1;; n = std::min(2 * n, max_replicas)) {
    GOODPUT_ASSIGN_OR_RETURN(const bool ok, probe(n));
    (ok ? holds : fails) = n;
    if (ok || n == max_replicas) break;
  }
  while (holds > 0 && holds - fails > 1) {
    const int mid = fails + (holds - fails) / 2;
    GOODPUT_ASSIGN_OR_RETURN(const bool ok, probe(mid));
    (ok ? holds : fails) = mid;
  }
  if (holds > 0) out.replicas = holds;
  return out;
}

std::string FormatFleetSize(const FleetSize& f, const Workload& w) {
  if (f.probes.empty()) return "";
  const PointResult& first = f.probes[0].point;
  const auto answer = std::find_if(f.probes.begin(), f.probes.end(),
                                   [&](const FleetProbe& p) { return f.replicas && p.replicas == *f.replicas; });
  std::string s =
      fmt::format("Fleet for load {} of workload {} (SLO: {}), each replica {} GPU{}\n{}\n\n", first.label, w.name,
                  w.Slo().empty() ? "none" : w.Slo().ToString(), f.gpus_per_replica, f.gpus_per_replica == 1 ? "" : "s",
                  (answer != f.probes.end() ? *answer : f.probes.back()).target);
  std::string classes;
  for (const ClassAttainment& c : first.classes) {
    if (c.has_slo) classes += fmt::format("  {:<28}", c.class_name);
  }
  s += fmt::format("{:>8} {:>5} {:>11} {:>10} {:>10}{}  {:>8}  {}\n", "replicas", "GPUs", "tok/s", "TTFT p99",
                   "TPOT p99", classes, "max/mean", "verdict");
  std::vector<FleetProbe> sorted = f.probes;
  std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.replicas < b.replicas; });
  for (const FleetProbe& p : sorted) {
    std::string cells;
    for (const ClassAttainment& c : p.point.classes) {
      if (c.has_slo) cells += fmt::format("  {:<28}", AttainmentCell(c));
    }
    s += fmt::format("{:>8} {:>5} {:>11.0f} {:>10} {:>10}{}  {:>8.2f}  {}\n", p.replicas,
                     p.replicas * f.gpus_per_replica, p.point.throughput, FormatDuration(p.point.ttft.p99),
                     FormatDuration(p.point.tpot.p99), cells, ReplicaImbalance(p.point), p.point.verdict_text());
  }
  if (!f.replicas) {
    return s + fmt::format("\nanswer: none up to {} replicas ({} GPUs) holds; raise --max-replicas\n", f.max_replicas,
                           f.max_replicas * f.gpus_per_replica);
  }
  return s + fmt::format("\nanswer: {} replica{} x {} GPU{} = {} GPU{}{}\n", *f.replicas, *f.replicas == 1 ? "" : "s",
                         f.gpus_per_replica, f.gpus_per_replica == 1 ? "" : "s", *f.replicas * f.gpus_per_replica,
                         *f.replicas * f.gpus_per_replica == 1 ? "" : "s",
                         *f.replicas > 1 ? fmt::format(" ({} do not hold)", *f.replicas - 1) : "");
}

boost::json::value FleetSizeToJson(const FleetSize& f) {
  boost::json::array probes;
  for (const FleetProbe& p : f.probes) {
    probes.push_back({{"replicas", p.replicas},
                      {"gpus", p.replicas * f.gpus_per_replica},
                      {"target", p.target},
                      {"point", PointToJson(p.point)}});
  }
  return {{"replicas", f.replicas ? boost::json::value(*f.replicas) : boost::json::value(nullptr)},
          {"gpus", f.replicas ? boost::json::value(*f.replicas * f.gpus_per_replica) : boost::json::value(nullptr)},
          {"gpus_per_replica", f.gpus_per_replica},
          {"max_replicas", f.max_replicas},
          {"probes", std::move(probes)}};
}

}  // namespace goodput
