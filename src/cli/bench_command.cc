#include "cli/bench_command.h"

#include <unistd.h>

#include <cctype>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <memory>

#include <boost/json.hpp>
#include <fmt/format.h>

#include "cli/measurement_flags.h"
#include "cli/target_flags.h"
#include "core/definitions.h"
#include "core/host.h"
#include "core/text.h"
#include "ledger/ledger.h"
#include "ledger/quote.h"
#include "measure/measurement.h"
#include "measure/point_report.h"
#include "report/html_report.h"

namespace goodput {
namespace {

enum class Mode { kBench, kSweep, kCapacity };

struct BenchArgs {
  MeasurementArgs m;
  TargetArgs t;
  std::string ledger = "goodput.db";
  double lag_threshold_ms = 10;
  bool csv = false, no_ledger = false, save_requests = false;
};

LoadUse LoadsOf(Mode mode) { return LoadUse{mode == Mode::kSweep, mode == Mode::kCapacity}; }

constexpr const char* kFooter = R"(Targets:
  http(s)://HOST:PORT[/v1]  any OpenAI-compatible server (--model: the served model name)
  embedded               goodput serve started on a free loopback port (--model: a preset;
                         --engine-args: its flags), stopped afterwards
  sim:GPU                the simulator on a catalog GPU (--model: a catalog model;
                         --engine-args: goodput sim's engine flags); sim:FILE on a calibration
--vary FLAG=V1,V2 restarts the engine per value (given again for another flag: every
combination): embedded, sim:GPU, or a URL with --launch 'COMMAND ... {flags}'.
Prompts are sent as token ids (exact input lengths) and outputs fixed with ignore_eos +
min_tokens unless --no-fixed-length.
)";

void AddFlags(CLI::App& c, BenchArgs& a, Mode mode) {
  AddTargetFlags(c, a.t);
  a.m.repeat = mode == Mode::kBench ? 1 : 5;
  AddMeasurementFlags(c, a.m, LoadsOf(mode));
  c.add_option("--lag-threshold-ms", a.lag_threshold_ms, "Send lag (p99) above which a point is flagged")
      ->capture_default_str();
  c.add_option("--ledger", a.ledger, "SQLite ledger that keeps every run (goodput ledger list)")->capture_default_str();
  c.add_flag("--no-ledger", a.no_ledger, "Do not record this run");
  c.add_flag("--save-requests", a.save_requests, "Also keep every request's record in the ledger");
  c.add_flag("--csv", a.csv, "Print CSV (one row per load point) instead of tables");
  c.footer(std::string(kFooter) + kMetricDefinitions);
}

Result<MeasurementSpec> Spec(const BenchArgs& a, Mode mode) {
  if (a.m.json && a.csv) return Status::InvalidArgument("give --json or --csv, not both");
  GOODPUT_ASSIGN_OR_RETURN(MeasurementSpec spec, ToMeasurementSpec(a.m, LoadsOf(mode), mode == Mode::kCapacity));
  GOODPUT_RETURN_IF_ERROR(CheckTargetFlags(a.t, !spec.vary.empty()));
  return spec;
}

RunInfo InfoFor(const BenchArgs& a, const Workload& w, const char* name) {
  RunInfo i;
  i.command = CommandLine().empty() ? std::string("goodput ") + name : CommandLine();
  i.target = a.t.target + (a.t.engine_args.empty() ? "" : " " + a.t.engine_args);
  for (const std::string& v : a.m.vary) i.target += " --vary " + v;
  i.model = a.t.model;
  i.hardware = KindOf(a.t) == TargetKind::kSim ? a.t.target : HostCpuName();
  i.workload_name = w.name;
  std::ifstream f(a.m.workload);
  std::stringstream text;
  text << f.rdbuf();
  i.workload_text = text.str();
  i.slo = w.Slo().empty() ? "" : w.Slo().ToString();
  i.version = GOODPUT_VERSION;
  i.host = HostName();
  return i;
}

// The ledger run this measurement is recorded as (none with --no-ledger).
struct Recording {
  std::unique_ptr<Ledger> ledger;
  int64_t run = 0;
};

Result<Recording> BeginRecording(const BenchArgs& a, const Workload& w, const char* name) {
  Recording rec;
  if (a.no_ledger) return rec;
  GOODPUT_ASSIGN_OR_RETURN(rec.ledger, Ledger::Open(a.ledger));
  GOODPUT_ASSIGN_OR_RETURN(rec.run, rec.ledger->BeginRun(InfoFor(a, w, name)));
  return rec;
}

void PrintResults(const BenchArgs& a, const MeasurementSpec& spec, const std::vector<SettingResult>& results,
                  const Recording& rec, const char* name) {
  if (a.csv) {
    std::cout << ResultsToCsv(results);
    return;
  }
  if (a.m.json) {
    boost::json::value v = ResultsToJson(results);
    if (rec.ledger) v.as_object()["ledger_run"] = rec.run;
    std::cout << boost::json::serialize(v) << "\n";
    return;
  }
  std::cout << FormatResults(results, spec.workload, spec.repeat, spec.max_repeat, a.lag_threshold_ms / 1e3);
  if (!rec.ledger) return;
  std::cout << fmt::format("ledger: run {} in {} (which figures may be quoted: goodput ledger quote {}{})\n", rec.run,
                           a.ledger, rec.run, a.ledger == "goodput.db" ? "" : " --ledger " + a.ledger);
  const int need = QuoteRules{}.min_repeats;
  size_t points = 0, few = 0;
  for (const SettingResult& r : results) {
    for (const PointResult& p : r.sweep.points) {
      ++points;
      if (p.repeats < need) ++few;
    }
  }
  if (few > 0) {
    std::cout << fmt::format("  ({} of {} points ran fewer than {} repetitions: enough for their verdicts, not for "
                             "quoting their figures; --repeat {} gives quotable ones)\n",
                             few, points, need, need);
  }
  // The report goes beside the ledger.
  const std::filesystem::path dir = std::filesystem::absolute(a.ledger).parent_path();
  const std::string report = (dir / fmt::format("goodput-report-{}.html", rec.run)).string();
  if (Status st = report::WriteHtmlReport(*rec.ledger, rec.run, report); st.ok()) {
    std::cout << "report: " << report << "\n";
  } else {
    std::cerr << "goodput " << name << ": " << st.message() << "\n";
  }
}

// No load point has a successful request: the figures describe the failures.
bool EveryRequestFailed(const std::vector<SettingResult>& results) {
  for (const SettingResult& r : results) {
    for (const PointResult& p : r.sweep.points) {
      if (p.measured_ok() > 0 || p.failed == 0) return false;
    }
  }
  return true;
}

void Run(const BenchArgs& a, Mode mode, const char* name) {
  const auto fail = [&](const Status& st) {
    throw CLI::RuntimeError(fmt::format("goodput {}: {}", name, st.message()), 2);
  };
  auto spec = Spec(a, mode);
  if (!spec.ok()) fail(spec.status());
  auto rec = BeginRecording(a, spec->workload, name);
  if (!rec.ok()) fail(rec.status());
  MeasurementHooks hooks;
  hooks.progress = Progress;
  hooks.stop = Interrupted;
  if (rec->ledger) {
    hooks.on_point = [&](const Setting& setting, const PointResult& point, const std::vector<MeasuredRun>& runs) {
      return RecordPoint(*rec->ledger, rec->run, setting.Label(), spec->workload, point, runs, a.save_requests);
    };
  }
  CatchStopSignals();
  auto results = Measure(*spec, [&](const Setting& s) { return MakeTarget(a.t, s); }, hooks);
  ReleaseStopSignals();
  Progress("");
  if (!results.ok()) {
    if (rec->ledger) (void)rec->ledger->FinishRun(rec->run, Interrupted() ? "interrupted" : "failed");
    if (Interrupted()) {
      std::cerr << fmt::format("goodput {}: interrupted; the points measured so far are kept as run {} in {}\n", name,
                               rec->run, a.ledger);
      throw CLI::RuntimeError("", 128 + StopSignal());  // 130 for SIGINT, as a shell reports it
    }
    fail(results.status());
  }
  if (rec->ledger) {
    if (Status st = rec->ledger->FinishRun(rec->run, "complete"); !st.ok()) fail(st);
  }
  PrintResults(a, *spec, *results, *rec, name);
  if (EveryRequestFailed(*results)) {
    throw CLI::RuntimeError(fmt::format("goodput {}: every request failed: nothing was measured (the notes above say "
                                        "why)", name), 3);
  }
}

void AddOne(CLI::App& app, Mode mode, const char* name, const char* help) {
  auto args = std::make_shared<BenchArgs>();
  args->t.stop = Interrupted;
  CLI::App* c = app.add_subcommand(name, help);
  AddFlags(*c, *args, mode);
  c->callback([args, mode, name]() { Run(*args, mode, name); });
}

}  // namespace

void AddBenchCommands(CLI::App& app) {
  AddOne(app, Mode::kBench, "bench", "Measure one load point against a target: TTFT/TPOT, attainment, goodput");
  AddOne(app, Mode::kSweep, "sweep", "Measure a ladder of loads (--repeat runs each, medians) against a target");
  AddOne(app, Mode::kCapacity, "capacity", "Search the highest load at which every class holds its SLO on a target");
}

}  // namespace goodput
