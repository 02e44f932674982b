// What this machine is, for records: "AMD EPYC 9R14 (2 CPUs)" and its memory.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

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

// The fields of /proc/PID/stat after the command name (field 3, the state,
// first); empty when the process does not exist. The name may hold spaces
// and parentheses, so the fields are counted from its last ')'.
std::vector<std::string> ProcessStatFields(const std::string& stat_path);

// This process as "HOST:PID:START", START its start time in clock ticks since
// boot (so a later process given the same pid is not taken for it).
std::string ProcessOwner();

// Whether the process `owner` (a ProcessOwner) still runs: false only when it
// names this host and no process with that pid and start time exists; true
// for another host's (which cannot be checked from here) or an unreadable one.
bool OwnerIsAlive(const std::string& owner);

}  // namespace goodput
