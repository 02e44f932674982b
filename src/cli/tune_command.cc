#include "cli/tune_command.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>

#include <boost/json.hpp>
#include <fmt/format.h>

#include "cli/measurement_flags.h"
#include "cli/tune_sides.h"
#include "client/answers.h"
#include "core/definitions.h"
#include "core/host.h"
#include "ledger/ledger.h"
#include "cli/target_flags.h"
#include "tune/serve_flags.h"
#include "tune/tune_report.h"

namespace goodput {
namespace {

struct TuneArgs {
  TuneSideArgs sides;
  MeasurementArgs m;
  std::string space, ledger = "goodput.db", write_config;
  int top = 3, budget = 60;
  bool no_confirm = false, no_ledger = false, no_compare_outputs = false;
  OutputThresholds thresholds;
};

constexpr LoadUse kTuneLoads{/*ladder=*/false, /*capacity=*/true, /*vary=*/false};

constexpr const char* kFooter = R"(How it decides:
  1. Every setting of --space is scored by the capacity search (the highest load at which
     every class holds its SLO, the same Wilson verdicts as goodput capacity), on the
     simulator: the whole grid when it fits the --budget, else coordinate descent with
     successive halving (each flag in turn at every other value, screened by a coarse
     search, the best two searched in full). Settings the planner says will not start
     are kept with its reason.
  2. The simulator's --top settings and the engine as configured (the baseline) are
     measured on the target by the same capacity search, starting at the prediction.
     Settings that can change the model's answers (KV cache or weight format,
     speculative decoding) have their answers compared with the baseline's.
  3. Ranking: capacity, then goodput at capacity, then SLO margin, memory headroom and
     fewer changed flags; the measured ranking decides over the simulator's. The
     recommendation is the best whose outputs agree, with the flags to paste.
Simulators: --target sim:GPU searches and answers on the simulator alone; --target
embedded fits the simulator to goodput serve's logged steps on its baseline run unless
--sim names one; a URL target needs --sim (a catalog card or a calibration file) and a
--launch template with {flags}, e.g. 'vllm serve M --port 8000 {flags}'.
)";

void AddFlags(CLI::App& c, TuneArgs& a) {
  AddTargetFlags(c, a.sides.t);
  a.m.repeat = 1;
  AddMeasurementFlags(c, a.m, kTuneLoads);
  c.add_option("--space", a.space,
               "Settings to search, e.g. 'max-num-seqs=8..512, max-num-batched-tokens=512..16384, "
               "gpu-memory-utilization=0.80..0.95, kv-cache-dtype=auto|fp8, num-speculative-tokens=0|2|4' (whole "
               "numbers: the ends and the powers of two between; sizes double; decimals: four values; A|B lists). "
               "Default: vLLM's batch cap, chunk size, memory share and KV format (embedded: goodput serve's)");
  c.add_option("--sim", a.sides.sim, "The simulator to search on: sim:GPU or sim:FILE (a calibration)");
  c.add_option("--sim-model", a.sides.sim_model, "The simulator's catalog model when --model is a served name");
  c.add_option("--sim-args", a.sides.sim_args,
               "goodput sim's flags for the simulator only (default: --engine-args), e.g. '--weights int4'");
  c.add_option("--top", a.top, "Settings measured on the target")->capture_default_str();
  c.add_option("--budget", a.budget, "Capacity searches the simulator may run")->capture_default_str();
  c.add_flag("--no-confirm", a.no_confirm, "Stop after the simulator's ranking (measure nothing on the target)");
  c.add_flag("--recalibrate", a.sides.recalibrate,
             "Fit the simulator to the target's runs and re-rank the search's best once (its new first is measured "
             "too when it was not)");
  c.add_option("--work-dir", a.sides.work_dir,
               "Where step logs and fitted calibrations go (default: a new temporary "
               "directory)");
  c.add_flag("--no-compare-outputs", a.no_compare_outputs,
             "Do not compare the answers of settings that change numerics with the baseline's");
  c.add_option("--min-token-agreement", a.thresholds.min_token_agreement,
               "Outputs differ below this share of agreeing tokens (goodput compare-outputs)")
      ->capture_default_str();
  c.add_option("--max-logprob-delta", a.thresholds.max_mean_abs_logprob_delta,
               "Outputs differ above this mean |d log p| over the agreeing tokens")
      ->capture_default_str();
  c.add_option("--write-config", a.write_config,
               "Write the recommendation as the engine's --config YAML file (vllm serve's; SGLang's with a sim "
               "target's --engine sglang)");
  c.add_option("--ledger", a.ledger, "SQLite ledger that keeps the study (goodput ledger studies)")
      ->capture_default_str();
  c.add_flag("--no-ledger", a.no_ledger, "Do not record this study");
  c.footer(std::string(kFooter) + kMetricDefinitions);
}

// The study in the ledger: a run per side, made when the side first measures.
class Recording {
 public:
  Recording(const TuneArgs& a, const Workload& w) : a_(a), w_(w) {}
  Status Open() {
    if (a_.no_ledger) return Status::Ok();
    GOODPUT_ASSIGN_OR_RETURN(ledger_, Ledger::Open(a_.ledger));
    GOODPUT_ASSIGN_OR_RETURN(study_, ledger_->BeginStudy("tune", CommandLine()));
    return Status::Ok();
  }
  Status Point(Side side, Fidelity f, const Setting& s, const PointResult& p, const std::vector<MeasuredRun>& runs) {
    if (!ledger_) return Status::Ok();
    int64_t& run = side == Side::kSimulator ? sim_run_ : target_run_;
    if (run == 0) {
      GOODPUT_ASSIGN_OR_RETURN(run, ledger_->BeginRun(Info(side)));
      GOODPUT_RETURN_IF_ERROR(ledger_->AddStudyRun(study_, run, side == Side::kSimulator ? "simulator" : "target"));
    }
    const std::string label = (s.empty() ? "(as configured)" : s.Label()) + (f == Fidelity::kScreen ? " [screen]" : "");
    return RecordPoint(*ledger_, run, label, w_, p, runs, false);
  }
  Status Finish(const std::string& status, const std::string& summary) {
    if (!ledger_) return Status::Ok();
    for (int64_t run : {sim_run_, target_run_}) {
      if (run != 0) GOODPUT_RETURN_IF_ERROR(ledger_->FinishRun(run, status));
    }
    return ledger_->FinishStudy(study_, status, summary);
  }
  int64_t study() const { return study_; }

 private:
  RunInfo Info(Side side) const {
    RunInfo i;
    i.command = CommandLine();
    const bool sim = side == Side::kSimulator || KindOf(a_.sides.t) == TargetKind::kSim;
    i.target = side == Side::kSimulator && KindOf(a_.sides.t) != TargetKind::kSim
                   ? (a_.sides.sim.empty() ? "sim (fitted to goodput serve's steps)" : a_.sides.sim)
                   : a_.sides.t.target + (a_.sides.t.engine_args.empty() ? "" : " " + a_.sides.t.engine_args);
    i.model = a_.sides.t.model;
    i.hardware = sim ? (a_.sides.sim.empty() ? a_.sides.t.target : a_.sides.sim) : HostCpuName();
    i.workload_name = w_.name;
    std::ifstream f(a_.m.workload);
    i.workload_text.assign(std::istreambuf_iterator<char>(f), {});
    i.slo = w_.Slo().empty() ? "" : w_.Slo().ToString();
    i.version = GOODPUT_VERSION;
    i.host = HostName();
    return i;
  }

  const TuneArgs& a_;
  const Workload& w_;
  std::unique_ptr<Ledger> ledger_;
  int64_t study_ = 0, sim_run_ = 0, target_run_ = 0;
};

// The answers of each measured setting that can change numerics, compared
// with the baseline's (asked first, and kept): the five fixed questions and
// the workload's first three requests.
std::function<Result<std::optional<OutputComparison>>(const Measured&, Target&)> OutputCheck(const TuneArgs& a,
                                                                                             const Workload& w) {
  auto prompts = client::FixedQuestions();
  for (auto& p : client::WorkloadPrompts(w, 3)) prompts.push_back(std::move(p));
  auto baseline = std::make_shared<std::optional<std::vector<Answer>>>();
  return [a, prompts, baseline](const Measured& m, Target& t) -> Result<std::optional<OutputComparison>> {
    GOODPUT_ASSIGN_OR_RETURN(client::Endpoint e, client::ParseEndpoint(t.ServedUrl()));
    e.api_key = a.sides.t.api_key;
    client::AnswerOptions o;
    o.endpoint = e;
    o.model = a.sides.t.model.empty() ? "goodput-small" : a.sides.t.model;
    o.chat = a.sides.t.chat;
    o.timeout_s = a.sides.t.timeout;
    o.insecure_tls = a.sides.t.insecure;
    o.stop = Interrupted;
    GOODPUT_ASSIGN_OR_RETURN(std::vector<Answer> answers, client::CollectAnswers(o, prompts));
    if (m.baseline) {
      *baseline = std::move(answers);
      return std::optional<OutputComparison>();
    }
    if (!*baseline) return Status::FailedPrecondition("the baseline's answers are missing");
    return std::optional(CompareAnswers(**baseline, answers, a.thresholds));
  };
}

Result<TuneSpec> Spec(const TuneArgs& a) {
  TuneSpec spec;
  GOODPUT_ASSIGN_OR_RETURN(spec.measurement, ToMeasurementSpec(a.m, kTuneLoads, /*search_capacity=*/true));
  GOODPUT_RETURN_IF_ERROR(
      CheckTargetFlags(a.sides.t, /*changes_settings=*/KindOf(a.sides.t) == TargetKind::kUrl && !a.no_confirm));
  GOODPUT_ASSIGN_OR_RETURN(spec.space, ParseSearchSpace(a.space.empty() ? DefaultSpace(KindOf(a.sides.t)) : a.space));
  spec.search.budget = a.budget;
  if (a.budget < 1) return Status::InvalidArgument("--budget must be at least 1");
  spec.top_k = a.top;
  spec.recalibrate = a.sides.recalibrate;
  spec.measurement.capacity.max_load = a.m.max_load;
  // A sim target's --engine says which engine will serve the answer; a URL's
  // flags are already the served engine's own.
  if (KindOf(a.sides.t) == TargetKind::kSim) spec.engine = EngineOfSimArgs(SplitArgs(a.sides.t.engine_args));
  if (!a.write_config.empty() && ServeCommand(spec.engine).empty())
    return Status::InvalidArgument("--write-config: goodput does not know --engine " + spec.engine +
                                   "'s config file; paste the engine flags it prints instead");
  return spec;
}

std::string MakeWorkDir(const std::string& given) {
  if (!given.empty()) {
    std::filesystem::create_directories(given);
    return given;
  }
  std::string tmpl = (std::filesystem::temp_directory_path() / "goodput-tune-XXXXXX").string();
  if (mkdtemp(tmpl.data()) == nullptr) return std::filesystem::temp_directory_path().string();
  return tmpl;
}

void Print(const TuneArgs& a, const TuneSpec& spec, const TuneResult& r, const Recording& rec) {
  if (a.m.json) {
    boost::json::value v = TuneToJson(spec, r);
    if (!a.no_ledger) v.as_object()["ledger_study"] = rec.study();
    std::cout << boost::json::serialize(v) << "\n";
    return;
  }
  std::cout << FormatTune(spec, r);
  if (!a.no_ledger) {
    std::cout << fmt::format("ledger: study {} in {} (goodput ledger study {}{})\n", rec.study(), a.ledger, rec.study(),
                             a.ledger == "goodput.db" ? "" : " --ledger " + a.ledger);
  }
}

void Run(TuneArgs a) {
  const auto fail = [](const Status& st) { throw CLI::RuntimeError("goodput tune: " + st.message(), 2); };
  auto spec = Spec(a);
  if (!spec.ok()) fail(spec.status());
  a.sides.confirm = !a.no_confirm;
  a.sides.work_dir = MakeWorkDir(a.sides.work_dir);
  auto sides = MakeTuneSides(a.sides, spec->measurement.workload);
  if (!sides.ok()) fail(sides.status());
  auto defaults = EngineDefaults(a.sides);
  if (!defaults.ok()) fail(defaults.status());
  spec->defaults = std::move(*defaults);
  Recording rec(a, spec->measurement.workload);
  if (Status st = rec.Open(); !st.ok()) fail(st);
  sides->progress = [](const std::string& line) { Progress("tune: " + line); };
  sides->stop = Interrupted;
  if (sides->target && !a.no_compare_outputs) sides->check_outputs = OutputCheck(a, spec->measurement.workload);
  sides->on_point = [&rec](Side side, Fidelity f, const Setting& s, const PointResult& p,
                           const std::vector<MeasuredRun>& runs) { return rec.Point(side, f, s, p, runs); };
  CatchStopSignals();
  auto result = Tune(*spec, *sides);
  ReleaseStopSignals();
  Progress("");
  if (!result.ok()) {
    (void)rec.Finish(Interrupted() ? "interrupted" : "failed", "");
    if (Interrupted()) {
      std::cerr << "goodput tune: interrupted; the points measured so far are kept in the ledger\n";
      throw CLI::RuntimeError("", 128 + StopSignal());
    }
    fail(result.status());
  }
  if (Status st = rec.Finish("complete", boost::json::serialize(TuneToJson(*spec, *result))); !st.ok()) fail(st);
  Print(a, *spec, *result, rec);
  if (!a.write_config.empty()) {
    const std::string yaml = RecommendationYaml(*spec, *result);
    std::ofstream out(a.write_config);
    if (yaml.empty() || !(out << yaml)) fail(Status::IoError("cannot write " + a.write_config));
    if (!a.m.json)
      std::cout << "written: " << a.write_config << " (" << ServeCommand(spec->engine) << " --config " << a.write_config
                << ")\n";
  }
}

}  // namespace

void AddTuneCommand(CLI::App& app) {
  auto args = std::make_shared<TuneArgs>();
  args->sides.t.stop = Interrupted;
  CLI::App* c = app.add_subcommand(
      "tune", "Search engine settings on the simulator, confirm the best on the target: the settings to paste");
  AddFlags(*c, *args);
  c->callback([args]() { Run(*args); });
}

}  // namespace goodput
