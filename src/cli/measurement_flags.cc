#include "cli/measurement_flags.h"

#include <unistd.h>

#include <atomic>
#include <csignal>
#include <iostream>

#include <fmt/format.h>

namespace goodput {

void AddMeasurementFlags(CLI::App& c, MeasurementArgs& a, LoadUse use) {
  c.add_option("--workload,-w", a.workload, "Workload file (YAML/JSON), e.g. data/workloads/chat.yaml");
  c.add_option("--slo", a.slo, "SLO per class, e.g. 'interactive: ttft p99 <= 1s, tpot p99 <= 100ms'");
  c.add_option("--concurrency,-c", a.concurrency,
               use.ladder      ? "Closed-loop clients per load, e.g. 1,8,32,128"
               : use.capacity ? "Closed-loop clients: one to start a doubling-then-bisection search from, or a ladder "
                                "(e.g. 2,4,8,16) to walk up to the first load that does not hold"
                              : "Closed-loop clients");
  c.add_option("--rate,-r", a.rate,
               use.ladder ? "Open-loop request rates (requests/s), e.g. 1,2,4" : "Open-loop requests/s");
  c.add_option("--burstiness", a.burstiness,
               "With --rate: gamma shape (1 = Poisson, < 1 burstier; default: the workload's arrival shape, "
               "Poisson when it has none)");
  c.add_option("--repeat", a.repeat,
               use.capacity ? "Runs per load (different seeds); figures are medians. A capacity search judges "
                              "each run as it ends and moves on once the load's verdict is decided"
                            : "Runs per load (different seeds); figures are medians")
      ->capture_default_str();
  c.add_option("--max-repeat", a.max_repeat,
               "While a class's verdict is undecided (its 95% interval straddles the SLO's percentile), run the load "
               "again, up to this many runs (default: 3 x --repeat)");
  c.add_option("--requests", a.requests, "Requests per run (default: the workload's)");
  if (use.vary) {
    c.add_option("--vary,--sweep", a.vary,
               "Run once per value of an engine flag, e.g. max-num-seqs=8,16,32; several flags (--vary A=.. B=.., "
               "or --vary given again) run every combination (a grid); settings ranked by capacity, then goodput");
  }
  if (use.capacity) {
    c.add_option("--max-load", a.max_load,
                 "Capacity search: highest load to try (default 4096 clients or 1000 req/s; clients at most half the "
                 "run's requests)");
  }
  c.add_flag("--json", a.json, "Print JSON instead of tables");
}

Result<MeasurementSpec> ToMeasurementSpec(const MeasurementArgs& a, LoadUse use, bool search_capacity) {
  if (a.workload.empty()) return Status::InvalidArgument("--workload is required (see data/workloads/)");
  if (a.repeat < 1) return Status::InvalidArgument("--repeat must be at least 1");
  if (a.requests < 0 || a.requests > kMaxRequests) {
    return Status::InvalidArgument(fmt::format("--requests must be 1 to {}", kMaxRequests));
  }
  MeasurementSpec spec;
  GOODPUT_ASSIGN_OR_RETURN(spec.workload, LoadWorkload(a.workload));
  if (!a.slo.empty()) {
    auto slo = ParseSlo(a.slo);
    if (!slo.ok()) return slo.status().WithContext("--slo");
    GOODPUT_RETURN_IF_ERROR(ApplySlo(spec.workload, *slo).WithContext("--slo"));
  }
  if (a.requests > 0) spec.workload.requests = a.requests;
  GOODPUT_ASSIGN_OR_RETURN(spec.loads, Ladder(a.concurrency, a.rate, a.burstiness, spec.workload));
  if (!use.ladder && !use.capacity && spec.loads.size() != 1) {
    return Status::InvalidArgument("goodput bench runs one load; use goodput sweep for several");
  }
  spec.search_capacity = search_capacity;
  spec.capacity.max_load = a.max_load;
  spec.repeat = a.repeat;
  spec.max_repeat = a.max_repeat > 0 ? a.max_repeat : 3 * a.repeat;
  if (spec.max_repeat < spec.repeat) return Status::InvalidArgument("--max-repeat must be at least --repeat");
  for (const std::string& text : a.vary) {
    auto vary = ParseVary(text);
    if (!vary.ok()) return vary.status().WithContext("--vary");
    spec.vary.push_back(std::move(*vary));
  }
  GOODPUT_RETURN_IF_ERROR(SettingGrid(spec.vary).status());
  return spec;
}

namespace {

std::atomic<int> g_signal{0};
constexpr int kStopSignals[] = {SIGINT, SIGTERM, SIGHUP};

void OnStopSignal(int sig) {
  g_signal.store(sig);
  for (int s : kStopSignals) std::signal(s, SIG_DFL);  // the next one is not caught
}

}  // namespace

void CatchStopSignals() {
  for (int s : kStopSignals) std::signal(s, OnStopSignal);
}

void ReleaseStopSignals() {
  for (int s : kStopSignals) std::signal(s, SIG_DFL);
}

bool Interrupted() { return g_signal.load() != 0; }

int StopSignal() { return g_signal.load(); }

void Progress(const std::string& what) {
  static const bool tty = isatty(STDERR_FILENO);
  if (tty) std::cerr << "\r\033[K" << what << std::flush;
}

namespace {
std::string& StoredCommandLine() {
  static std::string line;
  return line;
}
}  // namespace

void SetCommandLine(int argc, char** argv) {
  std::string& line = StoredCommandLine();
  line = "goodput";
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool quote = arg.empty() || arg.find_first_of(" \t'\"$") != std::string::npos;
    line += " " + (quote ? "'" + arg + "'" : arg);
  }
}

const std::string& CommandLine() { return StoredCommandLine(); }

}  // namespace goodput
