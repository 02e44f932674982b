// How busy this host was while we measured: CPU time from /proc, split into
// what this process and its descendants (an embedded goodput serve) used and
// what everything else took, the hypervisor's steal included. A measurement
// on a machine other work shares reads lower than the same one on a quiet
// machine (on this kind of host `nice` does not shield it: autogroup
// scheduling), so each run records the others' share.
#pragma once

#include <optional>

namespace goodput {

struct HostCpuSample {
  double total_s = 0;  // every CPU's time, idle included
  double busy_s = 0;   // user, nice, system, irq and softirq
  double steal_s = 0;  // taken by the hypervisor for other guests
  double ours_s = 0;   // user + system time of this process, its descendants and the children they reaped
};

// Now, from /proc/stat and /proc/PID/stat; empty where /proc is unreadable.
std::optional<HostCpuSample> SampleHostCpu();

// The host's CPU time between two samples and what other processes and
// steal took of it.
struct HostCpuUse {
  double others_s = 0;
  double total_s = 0;
};
HostCpuUse CpuUseBetween(const HostCpuSample& a, const HostCpuSample& b);

// The share others took of `use`, in [0, 1]; empty when it spans under
// kMinJudgedCpuSeconds (the kernel counts in 10 ms ticks: over a short run
// a few ticks of a daemon would read as a busy host).
std::optional<double> OthersCpuShare(const HostCpuUse& use);
constexpr double kMinJudgedCpuSeconds = 2.0;

// A point measured while others took more than this share is flagged.
constexpr double kBusyHostShare = 0.10;

}  // namespace goodput
