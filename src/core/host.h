// What this machine is, for records: "AMD EPYC 9R14 (2 CPUs)" and its memory.
#pragma once

#include <cstdint>
#include <string>

namespace goodput {

// The CPU model and count from /proc/cpuinfo; "unknown CPU" when unreadable.
std::string HostCpuName();

// Physical memory in bytes (0 when unknown).
int64_t HostMemoryBytes();

// Memory available to a new allocation without swapping (/proc/meminfo's
// MemAvailable) in bytes; 0 when unknown.
int64_t HostMemoryAvailableBytes();

// This host's name.
std::string HostName();

}  // namespace goodput
