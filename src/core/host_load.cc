#include "core/host_load.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "core/host.h"

namespace goodput {
namespace {

struct ProcessCpu {
  long ppid = 0;
  double cpu_s = 0;  // utime + stime, and the same of the children it reaped
};

// /proc/PID/stat's parent (field 4) and CPU time (utime, stime, cutime,
// cstime: fields 14 to 17; c*: the children it reaped).
std::optional<ProcessCpu> ReadProcessStat(const std::filesystem::path& stat, double tick) {
  const std::vector<std::string> f = ProcessStatFields(stat.string());
  if (f.size() < 15) return std::nullopt;
  try {
    ProcessCpu p;
    p.ppid = std::stol(f[1]);
    p.cpu_s = (std::stod(f[11]) + std::stod(f[12]) + std::stod(f[13]) + std::stod(f[14])) / tick;
    return p;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

// CPU time of this process and every process below it.
double OurCpuSeconds(double tick) {
  std::map<long, ProcessCpu> all;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string name = e.path().filename().string();
    if (name.empty() || !std::all_of(name.begin(), name.end(), ::isdigit)) continue;
    if (auto p = ReadProcessStat(e.path() / "stat", tick)) all[std::stol(name)] = *p;
  }
  std::map<long, std::vector<long>> children;
  for (const auto& [pid, p] : all) children[p.ppid].push_back(pid);
  double sum = 0;
  std::vector<long> todo = {static_cast<long>(getpid())};
  while (!todo.empty()) {
    const long pid = todo.back();
    todo.pop_back();
    if (auto it = all.find(pid); it != all.end()) sum += it->second.cpu_s;
    for (long c : children[pid]) todo.push_back(c);
  }
  return sum;
}

}  // namespace

std::optional<HostCpuSample> SampleHostCpu() {
  const double tick = static_cast<double>(sysconf(_SC_CLK_TCK));
  std::ifstream f("/proc/stat");
  std::string cpu;
  double user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0;
  if (!(f >> cpu >> user >> nice >> system >> idle >> iowait >> irq >> softirq) || cpu != "cpu" || tick <= 0) {
    return std::nullopt;
  }
  f >> steal;  // absent on old kernels
  HostCpuSample s;
  s.busy_s = (user + nice + system + irq + softirq) / tick;
  s.steal_s = steal / tick;
  s.total_s = s.busy_s + s.steal_s + (idle + iowait) / tick;
  s.ours_s = OurCpuSeconds(tick);
  return s;
}

HostCpuUse CpuUseBetween(const HostCpuSample& a, const HostCpuSample& b) {
  HostCpuUse use;
  use.total_s = std::max(0.0, b.total_s - a.total_s);
  const double others = (b.busy_s - a.busy_s) - (b.ours_s - a.ours_s) + (b.steal_s - a.steal_s);
  use.others_s = std::clamp(others, 0.0, use.total_s);
  return use;
}

std::optional<double> OthersCpuShare(const HostCpuUse& use) {
  if (!(use.total_s >= kMinJudgedCpuSeconds)) return std::nullopt;
  return use.others_s / use.total_s;
}

}  // namespace goodput
