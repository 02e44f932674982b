#include "step_logs.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include <fmt/format.h>

#include "sim_vs_serve_harness.h"

namespace goodput {
namespace {

// "case1-chat-cpu-load-4-run-2.log"; a fleet's replicas add "-replica-J".
std::string LogName(size_t k, const ComparisonCase& c, const ArrivalSpec& load, int round, int r, int replica) {
  std::string name = fmt::format("case{}-{}-load-{}-{}-{}", k + 1, c.spec.workload.name, LoadLabel(load),
                                 round == 0 ? "run" : "rerun", r);
  if (c.replicas > 1) name += fmt::format("-replica-{}", replica + 1);
  std::replace(name.begin(), name.end(), '/', '-');  // "3/s"
  return name + ".log";
}

}  // namespace

StepLogs::StepLogs(const std::vector<ComparisonCase>& cases, const std::string& dir, int rounds) : keep_(!dir.empty()) {
  const std::filesystem::path where = keep_ ? std::filesystem::path(dir) : std::filesystem::temp_directory_path();
  paths_.resize(rounds);
  for (int round = 0; round < rounds; ++round) {
    for (size_t k = 0; k < cases.size(); ++k) {
      const ComparisonCase& c = cases[k];
      auto& by_load = paths_[round].emplace_back();
      for (const ArrivalSpec& load : c.spec.loads) {
        auto& by_rep = by_load.emplace_back();
        for (int r = 1; r <= c.spec.repeat; ++r) {
          auto& by_replica = by_rep.emplace_back();
          for (int j = 0; j < c.replicas; ++j) {
            std::string name = LogName(k, c, load, round, r, j);
            if (!keep_) name = fmt::format("goodput-{}-{}", getpid(), name);
            by_replica.push_back((where / name).string());
          }
        }
      }
    }
  }
}

StepLogs::~StepLogs() {
  if (keep_) return;
  for (const auto& round : paths_) {
    for (const auto& by_case : round) {
      for (const auto& by_load : by_case) {
        for (const auto& by_rep : by_load) {
          for (const std::string& p : by_rep) std::filesystem::remove(p);
        }
      }
    }
  }
}

std::vector<std::string> StepLogs::Of(size_t k, size_t i) const {
  std::vector<std::string> out;
  for (const auto& by_rep : paths_[0][k][i]) out.insert(out.end(), by_rep.begin(), by_rep.end());
  return out;
}

std::vector<std::string> StepLogs::AllBut(size_t k, size_t i) const {
  std::vector<std::string> out;
  for (size_t a = 0; a < paths_[0].size(); ++a) {
    for (size_t b = 0; b < paths_[0][a].size(); ++b) {
      if (a == k && b == i) continue;
      const std::vector<std::string> load = Of(a, b);
      out.insert(out.end(), load.begin(), load.end());
    }
  }
  return out;
}

}  // namespace goodput
