#include "cli/workload_command.h"

#include <fmt/format.h>

#include <boost/json.hpp>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>

#include "core/json_file.h"
#include "core/units.h"
#include "workload/conversations.h"
#include "workload/trace_workload.h"
#include "workload/workload.h"

namespace goodput {
namespace {

struct FromArgs {
  std::string trace, output, name, slo;
  std::string profile_step;  // a rate profile per step of this length instead of a replay
  bool json = false;
  std::optional<double> chars_per_token;  // ShareGPT only
  bool vllm_bench_filter = false;         // ShareGPT only
};

constexpr const char* kFooter = R"(
Reads a trace (the Azure LLM inference trace's CSV, BurstGPT's CSV, Mooncake's JSONL, or any CSV with
timestamp / input-length / output-length columns: docs/measuring.md), prints its arrivals and lengths,
and writes a workload file that replays it (arrival type trace), with each class's length quantiles
for a --rate or --concurrency that replaces its arrivals. A dataset without arrival times (a CSV
without a timestamp column, or ShareGPT's JSON: each conversation's first turn the prompt, its second
the answer, as vLLM's benchmark samples it) gives a workload of its length quantiles. With
--profile-step, a timed trace becomes a day profile instead: each class's arrivals per step as its
rate, which goodput sim runs step by step (its windows line up with the steps). Check the file,
add the SLO you serve under (or give --slo), then run it with bench, sweep, capacity, sim or tune.
Examples:
  goodput workload from AzureLLMInferenceTrace_conv.csv -o azure-conv.yaml --slo 'ttft p99 <= 2s'
  goodput workload from BurstGPT_1.csv --profile-step 1h -o burstgpt-hours.yaml --slo 'ttft p99 <= 2s over 1h'
  goodput workload from ShareGPT_V3_unfiltered_cleaned_split.json --vllm-bench-filter -o sharegpt.yaml
)";

std::string LengthRow(const char* what, const LengthSummary& s) {
  return fmt::format("  {:<8}{:>10.0f}{:>10.0f}{:>10.0f}{:>10.0f}{:>10}{:>12.2f}\n", what, s.mean, s.p50, s.p90, s.p99,
                     s.max, s.log_sigma);
}

std::string Table(const TraceSummary& s, bool untimed) {
  std::string t =
      untimed ? fmt::format("{} requests, without arrival times\n", s.requests)
              : fmt::format("{} requests over {:.0f} s: {:.3g} requests/s on average, {:.3g} in the busiest minute\n",
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
        "unbounded prefix cache's hit rate); the replay sends the same tokens wherever the trace repeats a "
        "block's hash, so a prefix cache finds them (a --rate or --concurrency draws fitted lengths instead, "
        "without shared blocks)\n",
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

// What the input holds: its rows, whether they have arrival times, and for
// a conversation dataset how its tokens were counted and what was left out.
struct Input {
  std::vector<TraceRow> rows;
  bool untimed = false;
  int64_t skipped_empty = 0;
  std::string note;  // for the workload file's comment and the table
};

Result<Input> ReadInput(const FromArgs& a) {
  Input in;
  if (IsJsonArrayFile(a.trace)) {
    ConversationOptions o;
    o.chars_per_token = a.chars_per_token.value_or(o.chars_per_token);
    o.vllm_bench_filter = a.vllm_bench_filter;
    GOODPUT_ASSIGN_OR_RETURN(ConversationLengths c, ReadConversations(a.trace, o));
    in.rows = std::move(c.rows);
    in.untimed = true;
    in.note = fmt::format(
        "ShareGPT layout: {} conversations, {} of fewer than two turns{}; tokens counted as {:g} characters each",
        c.conversations, c.too_short,
        a.vllm_bench_filter ? fmt::format(", {} left out by vLLM's benchmark filter", c.filtered) : "",
        o.chars_per_token);
    return in;
  }
  if (a.chars_per_token || a.vllm_bench_filter) {
    return Status::InvalidArgument("--chars-per-token and --vllm-bench-filter are for a ShareGPT JSON file");
  }
  GOODPUT_ASSIGN_OR_RETURN(in.rows, ReadTrace(a.trace, /*skip_empty=*/true, &in.skipped_empty, &in.untimed));
  return in;
}

// The workload file's text: a replay of the trace, a profile of its rates
// per --profile-step, or a dataset's lengths alone.
Result<std::string> WorkloadYaml(const FromArgs& a, const Input& in, const TraceSummary& s, const std::string& output,
                                 const std::string& name) {
  if (in.untimed) {
    if (!a.profile_step.empty()) {
      return Status::InvalidArgument("--profile-step needs arrival times, and this file has none");
    }
    return LengthsWorkloadYaml(s, a.trace, name, a.slo, in.note);
  }
  if (a.profile_step.empty()) {
    return TraceWorkloadYaml(s, TracePathFrom(a.trace, output), name, a.slo, in.skipped_empty > 0);
  }
  auto step = ParseDuration(a.profile_step);
  if (!step.ok() || !(*step > 0)) {
    return Status::InvalidArgument("--profile-step must be a positive duration, e.g. 1h");
  }
  GOODPUT_ASSIGN_OR_RETURN(auto profile, TraceRateProfile(in.rows, *step));
  return ProfileWorkloadYaml(s, profile, *step, a.trace, name, a.slo);
}

void Run(const FromArgs& a) {
  const auto fail = [](const Status& st) { throw CLI::RuntimeError("goodput workload from: " + st.message(), 2); };
  auto input = ReadInput(a);
  if (!input.ok()) fail(input.status());
  const std::string output = a.output.empty() ? std::filesystem::path(a.trace).stem().string() + ".yaml" : a.output;
  const std::string name = a.name.empty() ? std::filesystem::path(output).stem().string() : a.name;
  const std::string dir = std::filesystem::absolute(output).parent_path().string();
  if (!std::filesystem::is_directory(dir)) {
    fail(Status::InvalidArgument(fmt::format("cannot write {}: there is no folder {}", output, dir)));
  }
  const TraceSummary s = SummariseTrace(input->rows);
  auto yaml = WorkloadYaml(a, *input, s, output, name);
  if (!yaml.ok()) fail(yaml.status());
  // Parsed before it is written: a file that would not load is never left behind.
  if (auto parsed = ParseWorkload(*yaml, output, dir); !parsed.ok()) fail(parsed.status());
  if (Status st = WriteFileAtomically(output, *yaml); !st.ok()) fail(st);
  if (a.json) {
    boost::json::object doc = Json(s, output);
    doc["skipped_empty"] = input->skipped_empty;
    doc["arrival_times"] = !input->untimed;
    if (!input->note.empty()) doc["note"] = input->note;
    std::cout << boost::json::serialize(doc) << "\n";
    return;
  }
  std::cout << Table(s, input->untimed);
  if (!input->note.empty()) std::cout << input->note << "\n";
  if (input->skipped_empty > 0) {
    std::cout << fmt::format("{} requests of zero length (failed in the trace) are left out of the replay\n",
                             input->skipped_empty);
  }
  const char* what = input->untimed ? "the lengths of" : a.profile_step.empty() ? "replays" : "a rate profile of";
  std::cout << fmt::format("workload: {} ({} {})\n", output, what, a.trace);
}

}  // namespace

void AddWorkloadCommand(CLI::App& app) {
  CLI::App* w = app.add_subcommand("workload", "Workload files from what you have");
  w->require_subcommand(1);
  auto args = std::make_shared<FromArgs>();
  CLI::App* from = w->add_subcommand("from",
                                     "A workload file from a recorded trace (Azure, BurstGPT, Mooncake or CSV) or a "
                                     "dataset's lengths (ShareGPT JSON, CSV)");
  from->add_option("trace", args->trace, "The trace or dataset file")->required();
  from->add_option("-o,--output", args->output, "The workload file to write (default: the trace's name .yaml)");
  from->add_option("--name", args->name, "The workload's name (default: the output file's)");
  from->add_option("--slo", args->slo, "An SLO for every class, e.g. 'ttft p99 <= 2s, tpot p99 <= 100ms'");
  from->add_option("--chars-per-token", args->chars_per_token,
                   "ShareGPT JSON: characters per token when counting a turn's tokens (default 4, OpenAI's rule of "
                   "thumb for English; goodput carries no model's tokenizer)");
  from->add_flag("--vllm-bench-filter", args->vllm_bench_filter,
                 "ShareGPT JSON: keep what vLLM's benchmark keeps (prompt and answer >= 4 tokens, prompt <= 1024, "
                 "both <= 2048)");
  from->add_option("--profile-step", args->profile_step,
                   "A day profile instead of a replay: each class's arrivals per step of this length as its rate "
                   "(e.g. 1h; docs/sim.md, \"A day\")");
  from->add_flag("--json", args->json, "Print JSON instead of a table");
  from->footer(kFooter);
  from->callback([args]() { Run(*args); });
}

}  // namespace goodput
