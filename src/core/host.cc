#include "core/host.h"

#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "core/text.h"

namespace goodput {

std::string HostCpuName() {
  std::ifstream f("/proc/cpuinfo");
  std::string line, model;
  int cpus = 0;
  while (std::getline(f, line)) {
    if (line.rfind("model name", 0) == 0 && line.find(':') != std::string::npos) {
      model = std::string(Trim(line.substr(line.find(':') + 1)));
      ++cpus;
    }
  }
  return model.empty() ? "unknown CPU" : fmt::format("{} ({} CPUs)", model, cpus);
}

int64_t HostMemoryBytes() {
  const long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGE_SIZE);
  return pages > 0 && size > 0 ? static_cast<int64_t>(pages) * size : 0;
}

int64_t HostMemoryAvailableBytes() {
  std::ifstream f("/proc/meminfo");
  std::string key, unit;
  int64_t kib = 0;
  while (f >> key >> kib >> unit) {
    if (key == "MemAvailable:") return kib * 1024;
  }
  return 0;
}

std::vector<std::string> ProcessStatFields(const std::string& stat_path) {
  std::ifstream f(stat_path);
  std::string line;
  if (!std::getline(f, line)) return {};
  const size_t close = line.rfind(')');
  if (close == std::string::npos) return {};
  std::istringstream rest(line.substr(close + 1));
  std::vector<std::string> fields;
  for (std::string field; rest >> field;) fields.push_back(std::move(field));
  return fields;
}

namespace {

// Field 22 of /proc/PID/stat, the start time; "" when the process does not exist.
std::string StartTime(long pid) {
  const std::vector<std::string> f = ProcessStatFields("/proc/" + std::to_string(pid) + "/stat");
  return f.size() > 19 ? f[19] : "";
}

}  // namespace

std::string ProcessOwner() {
  const long pid = static_cast<long>(getpid());
  return HostName() + ":" + std::to_string(pid) + ":" + StartTime(pid);
}

bool OwnerIsAlive(const std::string& owner) {
  const size_t last = owner.rfind(':');
  const size_t mid = last == std::string::npos || last == 0 ? std::string::npos : owner.rfind(':', last - 1);
  if (mid == std::string::npos || owner.substr(0, mid) != HostName()) return true;
  long pid = 0;
  try {
    pid = std::stol(owner.substr(mid + 1, last - mid - 1));
  } catch (const std::exception&) {
    return true;
  }
  return pid > 0 && StartTime(pid) == owner.substr(last + 1);
}

std::string HostName() {
  char host[256] = {};
  gethostname(host, sizeof(host) - 1);
  return host;
}

}  // namespace goodput
