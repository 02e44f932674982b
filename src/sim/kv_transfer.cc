#include "sim/kv_transfer.h"

#include <fmt/format.h>

#include "hw/hardware.h"

namespace goodput {

const char* KvLinkNames() { return "nvlink, infiniband, ethernet"; }

Result<KvLink> KvLinkNamed(const std::string& name, const HardwareSpec& hw) {
  if (name == "nvlink") {
    if (hw.link_bandwidth <= 0) {
      return Status::InvalidArgument(fmt::format(
          "--kv-link nvlink: the catalog gives {} no GPU-to-GPU link; give --kv-transfer-bandwidth", hw.name));
    }
    return KvLink{name, hw.link_bandwidth, hw.link_latency_s};
  }
  if (name == "infiniband") return KvLink{name, 400e9 / 8, 0};
  if (name == "ethernet") return KvLink{name, 100e9 / 8, 0};
  return Status::InvalidArgument(fmt::format("--kv-link '{}': one of {}", name, KvLinkNames()));
}

double KvTransferSeconds(const KvLink& link, const std::vector<KvGroupSpec>& groups, int64_t block_bytes,
                         int64_t tokens) {
  const double bytes = static_cast<double>(PeakBlocks(groups, tokens, tokens)) * static_cast<double>(block_bytes);
  return link.latency_s + (link.bandwidth > 0 ? bytes / link.bandwidth : 0);
}

}  // namespace goodput
