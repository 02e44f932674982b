#include "cli/calibrate_command.h"

#include <filesystem>
#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "calibrate/engine_calibration.h"
#include "calibrate/ledger_fit.h"
#include "calibrate/published.h"
#include "cli/deployment_flags.h"
#include "cli/engine_flags.h"
#include "cli/measurement_flags.h"
#include "model/catalog.h"

namespace goodput {
namespace {

struct StepsArgs {
  std::string model = "goodput-small", load_format = "auto", out = "cpu-calibration.json";
  std::vector<std::string> step_logs;
  uint64_t seed = 0;
  EngineArgs engine;
  int repeats = 5;
};

// What `calibrate ledger` and `calibrate published` share: the deployment the
// figures were measured on, how the fit runs, and where it goes.
struct FitArgs {
  DeploymentArgs d;
  LedgerFitOptions options;
  std::string out;  // empty: GPU-calibration.json
};

struct LedgerArgs {
  int64_t run = 0;
  std::string ledger = "goodput.db";
  FitArgs fit;
};

constexpr const char* kStepsFooter =
    R"(Runs goodput serve's CPU engine (the same model, KV pool and runner) in this process
over a grid of steps — decodes of 1 to 65 requests at short and long contexts,
prefills of 16 to 1,024 tokens — times each on the real clock (median of --repeats),
and fits the cost model: per-step and per-request costs, effective memory bandwidth,
the matmul rate by tokens per step, and the overlap of compute and memory. The CPU
becomes a hardware the simulator models: goodput sim --calibration FILE.

With --from-step-log FILE it fits the steps goodput serve took while serving instead
(goodput serve --step-log FILE): mixed prefill and decode steps, timed as they ran, with
the load generator and the HTTP threads on the same cores. It also fits the engine's loop
around its steps: the time between them, and in closed loops the chance that a client's
next request reaches the engine before the next step starts and joins it, and when it
does not, its time after that start.
)";

struct PublishedArgs {
  std::string file;
  FitArgs fit;
};

constexpr const char* kPublishedFooter =
    R"(Figures someone published for a deployment (a vendor's page, an engine's benchmark):
each point's workload is simulated at its load on the deployment the flags describe
(--model, --gpu, --tp and the engine settings that run used), and compute and bandwidth
efficiency, step overhead and per-request cost (or those --fit names) are fitted so the
simulated figures match the published ones. The file:
  source: where the figures come from
  points:
    - workload: random-4000-200-burst.yaml   # beside the file, else data/workloads/
      ttft_p50_s: 61.95                       # any of ttft_p50_s, tpot_p50_s,
      tpot_p50_s: 0.17737                     # throughput_tokens_per_s (output tokens/s)
    - workload: sharegpt-means.yaml
      concurrency: 4                          # or rate: R; neither: the workload's arrival
      tpot_p50_s: 0.01913
Fit to some points and compare the rest with goodput sim --calibration FILE: figures a
fit saw do not test it.
)";

void Fail(const Status& st) { throw CLI::RuntimeError("goodput calibrate: " + st.message(), 2); }

void Report(const Calibration& c, const std::string& out) {
  std::cout << fmt::format("calibration of {} on {}\n{}\n", c.model, c.hardware.display.empty() ? c.hardware.name
                                                                                               : c.hardware.display,
                           c.source);
  std::cout << FormatResiduals(c);
  const CostFactors& f = c.factors;
  std::cout << fmt::format(
      "factors: peak {:.3g} FLOP/s, bandwidth {:.3g} B/s, compute efficiency {:.3f}, bandwidth efficiency {:.3f}, "
      "step overhead {:.3f} ms, per request {:.1f} us{}, overlap {:.2f}\n",
      f.peak_flops, f.bandwidth, f.compute_efficiency, f.bandwidth_efficiency, f.step_overhead_s * 1e3,
      f.per_sequence_s * 1e6, f.async_scheduling ? " (async: hidden behind the GPU's work)" : "", f.overlap);
  if (f.frontend_latency_s > 0) {
    std::cout << fmt::format("front end: {:.1f} ms before the scheduler sees a request\n", f.frontend_latency_s * 1e3);
  }
  if (f.expert_efficiency > 0) std::cout << fmt::format("routed experts: efficiency {:.3f}\n", f.expert_efficiency);
  for (auto [what, curve] : {std::pair{"matmul efficiency by tokens per step:", &f.efficiency_curve},
                             {"attention efficiency by a request's tokens:", &f.attention_curve}}) {
    if (curve->empty()) continue;
    std::cout << what;
    for (const auto& [tokens, eff] : *curve) std::cout << fmt::format(" {:g}:{:.3f}", tokens, eff);
    std::cout << "\n";
  }
  if (Status st = SaveCalibration(c, out); !st.ok()) Fail(st);
  std::cout << "written: " << out << " (goodput sim --calibration " << out;
  // A CPU calibration is also goodput serve's slo prior for the same model.
  if (c.hardware.cpu) std::cout << "; goodput serve --scheduling-policy slo --step-calibration " << out;
  std::cout << ")\n";
}

void RunSteps(const StepsArgs& a) {
  cpu::CpuEngineConfig config;
  config.model = a.model;
  config.load_format = a.load_format;
  config.seed = a.seed;
  auto engine = ToEngineConfig(a.engine);
  if (!engine.ok()) Fail(engine.status());
  config.engine = *engine;
  if (a.repeats < 1) Fail(Status::InvalidArgument("--repeats must be at least 1"));
  cpu::StepGrid grid;
  grid.repeats = a.repeats;
  if (!a.step_logs.empty()) Progress("calibrate: fitting the logged steps");
  auto c = !a.step_logs.empty() ? CalibrateFromStepLogs(config, a.step_logs)
                                : CalibrateCpuEngine(config, grid, [](const std::string& shape) {
                                    Progress("calibrate: measured " + shape);
                                  });
  Progress("");
  if (!c.ok()) Fail(c.status());
  Report(*c, a.out);
}

// The simulator of the deployment the flags describe, and its hardware.
std::pair<SimSetup, HardwareSpec> DeploymentSetup(const DeploymentArgs& d, const char* model_needed) {
  if (d.model.empty()) Fail(Status::InvalidArgument(std::string("--model is required: ") + model_needed));
  auto model = LoadModel(d.model);
  if (!model.ok()) Fail(model.status());
  auto hw = ResolveHardware(d);
  if (!hw.ok()) Fail(hw.status());
  auto po = ToPlanOptions(d, *hw);
  if (!po.ok()) Fail(po.status());
  auto setup = SetupSimulation(*model, *po, *hw, nullptr, EngineHostName(d));
  if (!setup.ok()) Fail(setup.status());
  return {std::move(*setup), *hw};
}

// Writes the calibration to --out (default GPU-calibration.json), or fails.
void ReportFit(const Result<Calibration>& c, const FitArgs& a, const HardwareSpec& hw) {
  Progress("");
  if (!c.ok()) Fail(c.status());
  Report(*c, a.out.empty() ? fmt::format("{}-calibration.json", hw.name) : a.out);
}

void RunLedger(const LedgerArgs& a) {
  const auto [setup, hw] = DeploymentSetup(a.fit.d, "the model the run served");
  if (a.ledger != ":memory:" && !std::filesystem::exists(a.ledger)) Fail(Status::NotFound("no ledger at " + a.ledger));
  auto ledger = Ledger::Open(a.ledger);
  if (!ledger.ok()) Fail(ledger.status());
  Progress("calibrate: fitting the simulator to ledger run " + std::to_string(a.run));
  ReportFit(FitLedgerRun(**ledger, a.run, setup, hw, a.fit.options), a.fit, hw);
}

void RunPublished(const PublishedArgs& a) {
  auto figures = LoadPublishedFigures(a.file);
  if (!figures.ok()) Fail(figures.status());
  const auto [setup, hw] = DeploymentSetup(a.fit.d, "the model the figures were measured with");
  Progress(fmt::format("calibrate: fitting the simulator to {} published points", figures->loads.size()));
  const std::string source = fmt::format("goodput calibrate published: {} ({} points){}", a.file, figures->loads.size(),
                                         figures->source.empty() ? "" : "; " + figures->source);
  ReportFit(FitMeasuredLoads(figures->loads, setup, hw, source, a.fit.options), a.fit, hw);
}

// The deployment, --max-evaluations, --fit and --out of a fit subcommand.
void AddFitFlags(CLI::App& app, FitArgs& a) {
  AddDeploymentFlags(app, a.d, kEngineSizeFlags | kEngineSchedulingFlags | kEngineSpeculativeFlags);
  AddEngineHostFlag(app, a.d);  // the factors not fitted keep the engine's
  app.add_option("--max-evaluations", a.options.max_evaluations, "Simulations the fit may run per point set")
      ->capture_default_str();
  app.add_option("--fit", a.options.factors,
                 "The factors to fit, the rest kept: compute-efficiency, bandwidth-efficiency, step-overhead, "
                 "per-request-cost (fewer when few figures cannot tell them apart); also frontend-latency, the "
                 "time the engine's front end (its API server) adds to every request's first token, and "
                 "expert-efficiency, a MoE's routed experts' own matmul efficiency")
      ->delimiter(',')
      ->capture_default_str();
  app.add_option("--out,-o", a.out, "The calibration file to write (default GPU-calibration.json)");
}

}  // namespace

void AddCalibrateCommand(CLI::App& app) {
  CLI::App* cal =
      app.add_subcommand("calibrate", "Fit the simulator's cost model to measurements: write a calibration file");
  cal->require_subcommand(1);
  auto steps = std::make_shared<StepsArgs>();
  CLI::App* s = cal->add_subcommand("steps", "Measure goodput serve's CPU engine step by step and fit the cost model");
  s->add_option("--model,-m", steps->model, "Preset, catalog name or model directory (as goodput serve takes)")
      ->capture_default_str();
  s->add_option("--load-format", steps->load_format, "auto | dummy | safetensors")->capture_default_str();
  s->add_option("--seed", steps->seed, "Seed of dummy weights")->capture_default_str();
  AddEngineFlags(*s, steps->engine, kEngineSizeFlags);
  s->add_option("--repeats", steps->repeats, "Steps timed per shape (the median is kept)")->capture_default_str();
  s->add_option("--from-step-log", steps->step_logs,
                "Fit the steps goodput serve took while serving (goodput serve --step-log FILE, the same model; "
                "repeat for several logs) instead of timing a grid");
  s->add_option("--out,-o", steps->out, "The calibration file to write")->capture_default_str();
  s->footer(kStepsFooter);
  s->callback([steps]() { RunSteps(*steps); });

  auto led = std::make_shared<LedgerArgs>();
  CLI::App* l = cal->add_subcommand("ledger", "Fit the simulator to a ledger run's TTFT, TPOT and throughput by load");
  l->add_option("run", led->run, "Run number (goodput ledger list)")->required();
  l->add_option("--ledger", led->ledger, "The SQLite ledger")->capture_default_str();
  AddFitFlags(*l, led->fit);
  l->footer("The run's own workload (stored in the ledger) is simulated at each of its loads on the\n"
            "deployment the flags describe (--model, --gpu and the engine settings the run used);\n"
            "compute and bandwidth efficiency, step overhead and per-request cost (or those --fit\n"
            "names) are fitted so the simulated TTFT p50, TPOT p50 and throughput match the measured ones.\n");
  l->callback([led]() { RunLedger(*led); });

  auto pub = std::make_shared<PublishedArgs>();
  CLI::App* p = cal->add_subcommand("published", "Fit the simulator to published TTFT, TPOT and throughput figures");
  p->add_option("file", pub->file, "YAML file of the published points (see below)")->required();
  AddFitFlags(*p, pub->fit);
  p->footer(kPublishedFooter);
  p->callback([pub]() { RunPublished(*pub); });
}

}  // namespace goodput
