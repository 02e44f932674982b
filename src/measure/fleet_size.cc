#include "measure/fleet_size.h"

#include <algorithm>
#include <functional>
#include <tuple>

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

// Measures `count` instances (aggregated), or `prefill` prefill instances
// and `count` decode instances; whether the load held.
Result<bool> ProbeFleet(const MeasurementSpec& spec, const TargetFactory& make_target, const MeasurementHooks& hooks,
                        int prefill, int count, FleetSize& out) {
  MeasurementSpec one = spec;
  one.vary = prefill == 0 ? std::vector<Vary>{Vary{"replicas", {std::to_string(count)}}}
                          : std::vector<Vary>{Vary{"prefill-replicas", {std::to_string(prefill)}},
                                              Vary{"decode-replicas", {std::to_string(count)}}};
  GOODPUT_ASSIGN_OR_RETURN(std::vector<SettingResult> r, Measure(one, make_target, hooks));
  out.probes.push_back(FleetProbe{count, prefill, r.at(0).target, r.at(0).sweep.points.at(0)});
  return out.probes.back().point.holds();
}

// The fewest n in 1..most for which `probe(n)` holds (0: none does), by
// doubling from 1 and then bisecting between the last that failed and the
// first that held: holding is taken to be monotone in n.
Result<int> FewestThatHold(int most, const std::function<Result<bool>(int)>& probe) {
  int fails = 0, holds = 0;  // the most known to fail, the fewest known to hold (0: none yet)
  for (int n = 1;; n = std::min(2 * n, most)) {
    GOODPUT_ASSIGN_OR_RETURN(const bool ok, probe(n));
    (ok ? holds : fails) = n;
    if (ok || n == most) break;
  }
  while (holds > 0 && holds - fails > 1) {
    const int mid = fails + (holds - fails) / 2;
    GOODPUT_ASSIGN_OR_RETURN(const bool ok, probe(mid));
    (ok ? holds : fails) = mid;
  }
  return holds;
}

// "1 GPU", "8 GPUs".
std::string Gpus(int n) { return fmt::format("{} GPU{}", n, n == 1 ? "" : "s"); }

// Whether a split's prefill instances have a size of their own.
bool PrefillSizedApart(const FleetSize& f) {
  return f.gpus_per_prefill > 0 && f.gpus_per_prefill != f.gpus_per_replica;
}

}  // namespace

Result<FleetSize> SearchFleetSize(const MeasurementSpec& spec, int max_replicas, int gpus_per_replica,
                                  const TargetFactory& make_target, const MeasurementHooks& hooks) {
  GOODPUT_RETURN_IF_ERROR(CheckFleetSpec(spec, max_replicas));
  FleetSize out;
  out.gpus_per_replica = gpus_per_replica;
  out.max_replicas = max_replicas;
  const auto probe = [&](int n) { return ProbeFleet(spec, make_target, hooks, 0, n, out); };
  GOODPUT_ASSIGN_OR_RETURN(const int holds, FewestThatHold(max_replicas, probe));
  if (holds > 0) out.replicas = holds;
  return out;
}

int FleetGpus(const FleetSize& f, int prefill, int replicas) {
  return prefill * (f.gpus_per_prefill > 0 ? f.gpus_per_prefill : f.gpus_per_replica) + replicas * f.gpus_per_replica;
}

Status SearchDisaggregatedFleet(const MeasurementSpec& spec, const TargetFactory& make_target,
                                const MeasurementHooks& hooks, FleetSize& out) {
  GOODPUT_RETURN_IF_ERROR(CheckFleetSpec(spec, out.max_replicas));
  out.searched_split = true;
  // The most GPUs a split may use: the aggregated answer's, then fewer than the best split's.
  int cap = FleetGpus(out, 0, out.replicas.value_or(out.max_replicas));
  for (int prefill = 1;; ++prefill) {
    const int most_decode = (cap - FleetGpus(out, prefill, 0)) / out.gpus_per_replica;
    if (most_decode < 1) break;
    const auto probe = [&](int decode) { return ProbeFleet(spec, make_target, hooks, prefill, decode, out); };
    GOODPUT_ASSIGN_OR_RETURN(const int decode, FewestThatHold(most_decode, probe));
    if (decode == 0) continue;
    out.split = {prefill, decode};
    cap = FleetGpus(out, prefill, decode) - 1;
  }
  return Status::Ok();
}

std::string FormatFleetSize(const FleetSize& f, const Workload& w) {
  if (f.probes.empty()) return "";
  const PointResult& first = f.probes[0].point;
  const auto answer = std::find_if(f.probes.begin(), f.probes.end(),
                                   [&](const FleetProbe& p) { return f.replicas && p.replicas == *f.replicas; });
  const std::string prefill_size =
      PrefillSizedApart(f) ? fmt::format(", each prefill instance {}", Gpus(f.gpus_per_prefill)) : "";
  std::string s = fmt::format("Fleet for load {} of workload {} (SLO: {}), each replica {}{}\n{}\n\n", first.label,
                              w.name, w.Slo().empty() ? "none" : w.Slo().ToString(), Gpus(f.gpus_per_replica),
                              prefill_size, (answer != f.probes.end() ? *answer : f.probes.back()).target);
  std::string classes;
  for (const ClassAttainment& c : first.classes) {
    if (c.has_slo) classes += fmt::format("  {:<28}", c.class_name);
  }
  s += fmt::format("{:>8} {:>5} {:>11} {:>10} {:>10}{}  {:>8}  {}\n", "replicas", "GPUs", "tok/s", "TTFT p99",
                   "TPOT p99", classes, "max/mean", "verdict");
  std::vector<FleetProbe> sorted = f.probes;  // aggregated first, then by GPUs
  std::sort(sorted.begin(), sorted.end(), [&f](const auto& a, const auto& b) {
    return std::tuple(a.prefill > 0, FleetGpus(f, a.prefill, a.replicas), a.prefill) <
           std::tuple(b.prefill > 0, FleetGpus(f, b.prefill, b.replicas), b.prefill);
  });
  for (const FleetProbe& p : sorted) {
    std::string cells;
    for (const ClassAttainment& c : p.point.classes) {
      if (c.has_slo) cells += fmt::format("  {:<28}", AttainmentCell(c));
    }
    const std::string label =
        p.prefill > 0 ? fmt::format("{}P+{}D", p.prefill, p.replicas) : std::to_string(p.replicas);
    s += fmt::format("{:>8} {:>5} {:>11.0f} {:>10} {:>10}{}  {:>8.2f}  {}\n", label,
                     FleetGpus(f, p.prefill, p.replicas), p.point.throughput, FormatDuration(p.point.ttft.p99),
                     FormatDuration(p.point.tpot.p99), cells, ReplicaImbalance(p.point), p.point.verdict_text());
  }
  const auto gpus = [&](int replicas) { return Gpus(FleetGpus(f, 0, replicas)); };
  s += !f.replicas
           ? fmt::format("\nanswer: none up to {} replicas ({}) holds; raise --max-replicas\n", f.max_replicas,
                         gpus(f.max_replicas))
           : fmt::format("\nanswer: {} replica{} x {} = {}{}\n", *f.replicas, *f.replicas == 1 ? "" : "s", gpus(1),
                         gpus(*f.replicas), *f.replicas > 1 ? fmt::format(" ({} do not hold)", *f.replicas - 1) : "");
  if (!f.searched_split) return s;
  if (!f.split) return s + "disaggregated: no split of as few instances holds\n";
  const auto [p, d] = *f.split;
  const int split = FleetGpus(f, p, d), together = f.replicas ? FleetGpus(f, 0, *f.replicas) : 0;
  const std::string sizes =
      PrefillSizedApart(f)
          ? fmt::format("{} prefill x {} + {} decode x {}", p, Gpus(f.gpus_per_prefill), d, Gpus(f.gpus_per_replica))
          : fmt::format("{} prefill + {} decode instances x {}", p, d, Gpus(f.gpus_per_replica));
  return s + fmt::format("disaggregated: {} = {}{}\n", sizes, Gpus(split),
                         split < together    ? fmt::format(", {} fewer", Gpus(together - split))
                         : split == together ? ", as many as aggregated"
                                             : "");
}

boost::json::value FleetSizeToJson(const FleetSize& f) {
  boost::json::array probes;
  for (const FleetProbe& p : f.probes) {
    probes.push_back({{"replicas", p.replicas},
                      {"prefill_replicas", p.prefill},
                      {"gpus", FleetGpus(f, p.prefill, p.replicas)},
                      {"target", p.target},
                      {"point", PointToJson(p.point)}});
  }
  return {{"replicas", f.replicas ? boost::json::value(*f.replicas) : boost::json::value(nullptr)},
          {"gpus", f.replicas ? boost::json::value(*f.replicas * f.gpus_per_replica) : boost::json::value(nullptr)},
          {"gpus_per_replica", f.gpus_per_replica},
          {"gpus_per_prefill", f.gpus_per_prefill > 0 ? f.gpus_per_prefill : f.gpus_per_replica},
          {"max_replicas", f.max_replicas},
          {"split", f.split ? boost::json::value{{"prefill_replicas", f.split->first},
                                                 {"decode_replicas", f.split->second},
                                                 {"gpus", FleetGpus(f, f.split->first, f.split->second)}}
                            : boost::json::value(nullptr)},
          {"probes", std::move(probes)}};
}

}  // namespace goodput
