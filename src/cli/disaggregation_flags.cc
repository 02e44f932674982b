#include "cli/disaggregation_flags.h"

#include <fmt/format.h>

#include "core/units.h"
#include "sim/kv_transfer.h"

namespace goodput {

void AddFleetFlags(CLI::App& c, FleetArgs& a) {
  c.add_option("--replicas", a.replicas,
               "A fleet: this many engine instances (each --tp x --dp GPUs, its own scheduler and KV cache) behind "
               "--router, on one clock")
      ->capture_default_str();
  c.add_option("--router", a.router,
               "How the fleet's router picks an instance: round-robin, least-outstanding (fewest requests in "
               "flight), least-kv (lowest KV cache usage), prefix-affinity (a shared prompt prefix to one instance, "
               "within a load bound), session (a conversation's turns, else a closed-loop client's requests, to one "
               "instance)")
      ->capture_default_str();
  c.add_option("--prefill-replicas", a.prefill_replicas,
               "Prefill/decode disaggregation: this many instances only prefill; each prompt's KV then moves over "
               "--kv-link to one of --decode-replicas instances, which decode (the router picks in each pool)");
  c.add_option("--decode-replicas", a.decode_replicas, "With --prefill-replicas: the decode instances (default 1)");
  c.add_option("--prefill-tensor-parallel-size,--prefill-tp", a.prefill_tp,
               "With --prefill-replicas: GPUs each prefill instance is split across, planned on its own (default: "
               "--tp, which the decode instances keep)");
  c.add_option("--kv-link", a.kv_link,
               "With --prefill-replicas: the link a prompt's KV crosses, per GPU: nvlink (the card's, from the "
               "catalog: prefill and decode in one node), infiniband (400 Gb/s), ethernet (100 Gb/s)")
      ->capture_default_str();
  c.add_option("--kv-transfer-bandwidth", a.kv_transfer_bandwidth,
               "With --prefill-replicas: the link's bandwidth per GPU instead of --kv-link's, e.g. 50GB/s");
  c.add_option("--kv-transfer-latency", a.kv_transfer_latency,
               "With --prefill-replicas: a fixed time per transfer besides the bytes, e.g. 2ms (default: the "
               "card's link latency for nvlink, none for the networks)");
  c.add_option("--aggregated", a.aggregated,
               "With --prefill-replicas: run the same GPUs as --prefill-replicas + --decode-replicas ordinary "
               "instances instead (true/false)");
  c.add_flag("--compare-aggregated", a.compare_aggregated,
             "With --prefill-replicas: run the disaggregated fleet and the same GPUs aggregated, side by side "
             "(--vary aggregated=false,true)");
}

namespace {

Status CheckCount(int n, const char* flag) {
  if (n < 1 || n > kMaxReplicas) return Status::InvalidArgument(fmt::format("{} must be 1 to {}", flag, kMaxReplicas));
  return Status::Ok();
}

Result<KvLink> LinkOf(const FleetArgs& a, const HardwareSpec& hw) {
  KvLink link;
  if (a.kv_transfer_bandwidth.empty()) {
    GOODPUT_ASSIGN_OR_RETURN(link, KvLinkNamed(a.kv_link, hw));
  } else {
    const Result<double> bandwidth = ParseRate(a.kv_transfer_bandwidth, "B/s");
    if (!bandwidth.ok()) return bandwidth.status().WithContext("--kv-transfer-bandwidth");
    link.bandwidth = *bandwidth;
    link.name = "given";
  }
  if (!a.kv_transfer_latency.empty()) {
    const Result<double> latency = ParseDuration(a.kv_transfer_latency);
    if (!latency.ok()) return latency.status().WithContext("--kv-transfer-latency");
    link.latency_s = *latency;
  }
  return link;
}

}  // namespace

bool PrefillSizedApart(const FleetArgs& a, int tensor_parallel) {
  return a.prefill_replicas > 0 && !a.aggregated && a.prefill_tp && *a.prefill_tp != tensor_parallel;
}

Status ApplyFleet(const FleetArgs& a, const HardwareSpec& hw, int tensor_parallel, SimOptions& o) {
  GOODPUT_RETURN_IF_ERROR(CheckCount(a.replicas, "--replicas"));
  const std::optional<RouterPolicy> router = RouterPolicyFromName(a.router);
  if (!router) return Status::InvalidArgument(fmt::format("--router '{}': one of {}", a.router, RouterPolicyNames()));
  o.router = *router;
  o.replicas = a.replicas;
  if (a.prefill_replicas == 0) {
    if (a.decode_replicas != 0 || a.prefill_tp || a.aggregated || a.compare_aggregated) {
      return Status::InvalidArgument(
          "--decode-replicas, --prefill-tp, --aggregated and --compare-aggregated describe a disaggregated fleet: "
          "give --prefill-replicas");
    }
    return Status::Ok();
  }
  if (a.replicas != 1) {
    return Status::InvalidArgument(
        "--replicas sizes an aggregated fleet; with --prefill-replicas give --decode-replicas");
  }
  const int decode = a.DecodeReplicas();
  GOODPUT_RETURN_IF_ERROR(CheckCount(a.prefill_replicas, "--prefill-replicas"));
  GOODPUT_RETURN_IF_ERROR(CheckCount(decode, "--decode-replicas"));
  if (a.prefill_tp && (*a.prefill_tp < 1 || *a.prefill_tp > 1024)) {
    return Status::InvalidArgument("--prefill-tp must be 1 to 1024");
  }
  const int prefill_tp = a.prefill_tp.value_or(tensor_parallel);
  if (a.aggregated) {  // the same GPUs, every instance doing both at --tp
    const int64_t gpus = int64_t{a.prefill_replicas} * prefill_tp + int64_t{decode} * tensor_parallel;
    if (gpus % tensor_parallel != 0) {
      return Status::InvalidArgument(fmt::format(
          "--aggregated: the fleet's {} GPUs ({} prefill x {} + {} decode x {}) do not divide into instances of "
          "--tp {}",
          gpus, a.prefill_replicas, prefill_tp, decode, tensor_parallel, tensor_parallel));
    }
    o.replicas = static_cast<int>(std::min<int64_t>(kMaxReplicas, gpus / tensor_parallel));
    return Status::Ok();
  }
  GOODPUT_ASSIGN_OR_RETURN(o.kv_link, LinkOf(a, hw));
  o.prefill_replicas = a.prefill_replicas;
  o.replicas = decode;
  return Status::Ok();
}

}  // namespace goodput
