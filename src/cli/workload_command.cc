#include "cli/workload_command.h"

#include <fmt/format.h>

#include <boost/json.hpp>
#include <filesystem>
#include <iostream>
#include <memory>

#include "core/json_file.h"
#include "workload/trace_workload.h"
#include "workload/workload.h"

namespace goodput {
namespace {

struct FromArgs {
  std::string trace, output, name, slo;
  bool json = false;
};

constexpr const char* kFooter = R"(
Reads a trace (the Azure LLM inference trace's CSV, BurstGPT's CSV, Mooncake's JSONL, or any CSV with
timestamp / input-length / output-length columns: docs/measuring.md), prints its arrivals and lengths,
and writes a workload file that replays it (arrival type trace), with each class's lengths fitted to
the trace for a --rate or --concurrency that replaces its arrivals. Check the file, add the SLO you
serve under (or give --slo), then run it with bench, sweep, capacity, sim or tune.
Example:
  goodput workload from AzureLLMInferenceTrace_conv.csv -o azure-conv.yaml --slo 'ttft p99 <= 2s'
)";

std::string LengthRow(const char* what, const LengthSummary& s) {
  return fmt::format("  {:<8}{:>10.0f}{:>10.0f}{:>10.0f}{:>10.0f}{:>10}{:>12.2f}\n", what, s.mean, s.p50, s.p90, s.p99,
                     s.max, s.log_sigma);
}

std::string Table(const TraceSummary& s) {
  std::string t = fmt::format("{} requests over {:.0f} s: {:.3g} requests/s on average, {:.3g} in the busiest minute\n",
                              s.requests, s.span_s, s.mean_rate, s.peak_minute_rate);
  t += fmt::format("  {:<8}{:>10}{:>10}{:>10}{:>10}{:>10}{:>12}\n", "tokens", "mean", "p50", "p90", "p99", "max",
                   "log sigma");
  t += LengthRow("input", s.input) + LengthRow("output", s.output);
  for (const auto& [cls, c] : s.classes) {
    if (!cls.empty()) t += fmt::format("  class {}: {} requests\n", cls, c.requests);
  }
  if (s.prefix_reuse >= 0) {
    t += fmt::format(
        "prefix reuse: {:.1f}% of input tokens are in leading blocks an earlier request sent (an "
        "unbounded prefix cache's hit rate); the replay sends prompts of their own, so it does not "
        "reproduce this reuse\n",
        100 * s.prefix_reuse);
  }
  return t;
}

boost::json::object Json(const TraceSummary& s, const std::string& output) {
  const auto lengths = [](const LengthSummary& l) {
    return boost::json::object{{"mean", l.mean}, {"p50", l.p50}, {"p90", l.p90},
                               {"p99", l.p99},   {"max", l.max}, {"log_sigma", l.log_sigma}};
  };
  boost::json::object classes;
  for (const auto& [cls, c] : s.classes) classes[cls.empty() ? "default" : cls] = c.requests;
  return {{"requests", s.requests},
          {"span_s", s.span_s},
          {"mean_rate", s.mean_rate},
          {"peak_minute_rate", s.peak_minute_rate},
          {"input", lengths(s.input)},
          {"output", lengths(s.output)},
          {"classes", classes},
          {"workload", output},
          {"prefix_reuse", s.prefix_reuse >= 0 ? boost::json::value(s.prefix_reuse) : boost::json::value(nullptr)}};
}

// The trace as the workload file names it: relative to the file's folder.
std::string TracePathFrom(const std::string& trace, const std::string& output) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path dir = fs::absolute(output).parent_path();
  const fs::path rel = fs::relative(fs::absolute(trace), dir, ec);
  return ec || rel.empty() ? fs::absolute(trace).string() : rel.string();
}

void Run(const FromArgs& a) {
  const auto fail = [](const Status& st) { throw CLI::RuntimeError("goodput workload from: " + st.message(), 2); };
  int64_t skipped = 0;
  auto rows = ReadTrace(a.trace, /*skip_empty=*/true, &skipped);
  if (!rows.ok()) fail(rows.status());
  const std::string output = a.output.empty() ? std::filesystem::path(a.trace).stem().string() + ".yaml" : a.output;
  const std::string name = a.name.empty() ? std::filesystem::path(output).stem().string() : a.name;
  const std::string dir = std::filesystem::absolute(output).parent_path().string();
  if (!std::filesystem::is_directory(dir)) {
    fail(Status::InvalidArgument(fmt::format("cannot write {}: there is no folder {}", output, dir)));
  }
  const TraceSummary s = SummariseTrace(*rows);
  const std::string yaml = TraceWorkloadYaml(s, TracePathFrom(a.trace, output), name, a.slo, skipped > 0);
  // Parsed before it is written: a file that would not load is never left behind.
  if (auto parsed = ParseWorkload(yaml, output, dir); !parsed.ok()) fail(parsed.status());
  if (Status st = WriteFileAtomically(output, yaml); !st.ok()) fail(st);
  if (a.json) {
    boost::json::object doc = Json(s, output);
    doc["skipped_empty"] = skipped;
    std::cout << boost::json::serialize(doc) << "\n";
    return;
  }
  std::cout << Table(s);
  if (skipped > 0) {
    std::cout << fmt::format("{} requests of zero length (failed in the trace) are left out of the replay\n", skipped);
  }
  std::cout << fmt::format("workload: {} (replays {})\n", output, a.trace);
}

}  // namespace

void AddWorkloadCommand(CLI::App& app) {
  CLI::App* w = app.add_subcommand("workload", "Workload files from what you have");
  w->require_subcommand(1);
  auto args = std::make_shared<FromArgs>();
  CLI::App* from = w->add_subcommand("from",
                                     "A workload file that replays a recorded trace (Azure, BurstGPT, "
                                     "Mooncake or CSV)");
  from->add_option("trace", args->trace, "The trace file")->required();
  from->add_option("-o,--output", args->output, "The workload file to write (default: the trace's name .yaml)");
  from->add_option("--name", args->name, "The workload's name (default: the output file's)");
  from->add_option("--slo", args->slo, "An SLO for every class, e.g. 'ttft p99 <= 2s, tpot p99 <= 100ms'");
  from->add_flag("--json", args->json, "Print JSON instead of a table");
  from->footer(kFooter);
  from->callback([args]() { Run(*args); });
}

}  // namespace goodput
