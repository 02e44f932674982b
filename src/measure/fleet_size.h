// How many engine instances a load needs: the fewest replicas of one
// deployment at which every class holds its SLO, found by doubling and then
// bisection, each probe the whole measurement of one point. The answer in
// GPUs is that count times the GPUs of one replica.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <boost/json/value.hpp>

#include "measure/measurement.h"

namespace goodput {

struct FleetProbe {
  int replicas = 0;    // instances; with prefill > 0, the decode instances
  int prefill = 0;     // a disaggregated fleet's prefill instances; 0: aggregated
  std::string target;  // Target::Describe()
  PointResult point;
};

struct FleetSize {
  std::vector<FleetProbe> probes;  // in the order run
  std::optional<int> replicas;     // the fewest that held; empty: none up to the maximum did
  int gpus_per_replica = 1;
  int gpus_per_prefill = 0;  // a split's prefill instances, when sized apart (0: gpus_per_replica)
  int max_replicas = 0;
  bool searched_split = false;               // SearchDisaggregatedFleet ran
  std::optional<std::pair<int, int>> split;  // the fewest instances that held disaggregated: prefill, decode
};

// Measures `spec`'s one load (its workload and repetitions) on targets of
// 1, 2, 4, ... replicas (a Setting with flag "replicas") until one holds or
// `max_replicas` is reached, then bisects between the last that did not and
// the first that did. Errors: a spec with other than one load, a capacity
// search or varied flags; max_replicas < 1; a target or run error.
Result<FleetSize> SearchFleetSize(const MeasurementSpec& spec, int max_replicas, int gpus_per_replica,
                                  const TargetFactory& make_target, const MeasurementHooks& hooks = {});

// After SearchFleetSize on `out`: the disaggregated arrangement of the
// fewest GPUs that holds, searched below the aggregated answer's GPUs (or
// max_replicas'): for each prefill count P, the fewest decode instances D
// (doubling, then bisection; a Setting with flags "prefill-replicas" and
// "decode-replicas"), until P alone leaves no room for a smaller fleet. The
// prefill instances count out.gpus_per_prefill GPUs each when set (the
// targets must be sized so). Probes are added to `out`. Errors: as
// SearchFleetSize.
Status SearchDisaggregatedFleet(const MeasurementSpec& spec, const TargetFactory& make_target,
                                const MeasurementHooks& hooks, FleetSize& out);

// The GPUs of `prefill` prefill and `replicas` other instances of `f`'s fleet.
int FleetGpus(const FleetSize& f, int prefill, int replicas);

// For people: one row per probe (replicas, GPUs, throughput, TTFT/TPOT p99,
// each class's attainment, the busiest replica over the mean, the verdict)
// and the answer: "N replicas x G GPUs = N*G GPUs", or that none held.
std::string FormatFleetSize(const FleetSize& f, const Workload& workload);

// {"replicas": N or null, "gpus": N*G or null, "gpus_per_replica", "gpus_per_prefill", "max_replicas",
//  "split": {prefill_replicas, decode_replicas, gpus} or null, "probes": [{replicas, prefill_replicas, gpus,
//  target, point}]}
boost::json::value FleetSizeToJson(const FleetSize& f);

}  // namespace goodput
