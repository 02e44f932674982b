// Prefill/decode disaggregation's KV transfer: the link a prompt's KV moves
// over from the prefill instance to the decode instance, and how long a
// prompt's blocks take on it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "engine/kv_groups.h"

namespace goodput {

struct HardwareSpec;

// Each GPU of a tensor-parallel group sends its own shard of the blocks over
// its own link (one NVLink port set, or one NIC per GPU), so a transfer's
// time is one GPU's bytes over one link.
struct KvLink {
  std::string name;      // "nvlink", "infiniband", "ethernet" or "given"
  double bandwidth = 0;  // bytes/s per GPU, one direction
  double latency_s = 0;  // per transfer
};

// The link named `name` for `hw`: nvlink = the card's GPU-to-GPU link from
// the catalog (prefill and decode GPUs in one node); infiniband = 400 Gb/s
// (NDR, one port per GPU as in DGX H100/B200 nodes), ethernet = 100 Gb/s,
// each with no per-transfer latency unless given. Errors: an unknown name, a
// card without a link figure for nvlink.
Result<KvLink> KvLinkNamed(const std::string& name, const HardwareSpec& hw);

// "nvlink, infiniband, ethernet".
const char* KvLinkNames();

// Seconds to move the KV of a `tokens`-token prompt: the blocks it holds in
// `groups` (whole blocks, as vLLM's connectors move them) x `block_bytes`
// (one GPU's share of a block) over `link`, plus its latency.
double KvTransferSeconds(const KvLink& link, const std::vector<KvGroupSpec>& groups, int64_t block_bytes,
                         int64_t tokens);

}  // namespace goodput
