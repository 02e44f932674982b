// goodput sim's fleet flags: --replicas and --router for an aggregated fleet,
// --prefill-replicas, --decode-replicas and the KV link for a disaggregated
// one, and --aggregated / --compare-aggregated to run the same GPUs both ways.
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>

#include "core/status.h"
#include "hw/hardware.h"
#include "sim/simulator.h"

namespace goodput {

struct FleetArgs {
  int replicas = 1;
  std::string router = "round-robin";
  int prefill_replicas = 0;
  int decode_replicas = 0;  // 0: not given (1 with --prefill-replicas)
  std::optional<int> prefill_tp;  // the prefill instances' tensor-parallel size; none: --tp's
  std::string kv_link = "nvlink", kv_transfer_bandwidth, kv_transfer_latency;
  bool aggregated = false;          // the disaggregated fleet's GPUs as aggregated instances instead
  bool compare_aggregated = false;  // run both (measure: --vary aggregated=false,true)

  int DecodeReplicas() const { return decode_replicas == 0 ? 1 : decode_replicas; }
};

// A fleet's size: instances each simulated step by step (a typo of 10^6
// replicas is an error, not an hour of simulation).
constexpr int kMaxReplicas = 1024;

void AddFleetFlags(CLI::App& app, FleetArgs& a);

// The flags into `o` (instances, router, KV link from `hw`'s catalog entry or
// as given); `tensor_parallel` is --tp, each instance's size (the aggregated
// arrangement of a fleet whose prefill instances have their own size runs its
// GPUs as instances of --tp). The prefill pool itself (PrefillPool) is the
// caller's to plan. Errors name the flag: counts outside 1..kMaxReplicas, an
// unknown router or link, --replicas beside --prefill-replicas,
// --decode-replicas, --prefill-tp, --aggregated or --compare-aggregated
// without --prefill-replicas, a --prefill-tp below 1, an aggregated
// arrangement whose GPUs do not divide into instances of --tp, a bandwidth or
// latency that does not parse.
Status ApplyFleet(const FleetArgs& a, const HardwareSpec& hw, int tensor_parallel, SimOptions& o);

// Whether the prefill instances need a plan of their own: --prefill-tp
// given, differing from --tp, on a disaggregated fleet run as such.
bool PrefillSizedApart(const FleetArgs& a, int tensor_parallel);

}  // namespace goodput
