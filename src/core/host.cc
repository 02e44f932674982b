#include "core/host.h"

#include <unistd.h>

#include <fstream>

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

std::string HostName() {
  char host[256] = {};
  gethostname(host, sizeof(host) - 1);
  return host;
}

}  // namespace goodput
