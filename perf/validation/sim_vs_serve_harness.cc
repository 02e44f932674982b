#include "sim_vs_serve_harness.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "calibrate/engine_calibration.h"
#include "client/endpoint.h"
#include "client/server_process.h"
#include "core/host.h"
#include "core/stats.h"
#include "ledger/ledger.h"
#include "measure/point_report.h"
#include "model/catalog.h"
#include "sim/sim_target.h"
#include "step_logs.h"

namespace goodput {
namespace {

// `config`'s engine with the CPU engine's defaults for `config.model` filled
// in, as goodput serve will run it.
EngineConfig ResolvedEngine(const server::ServeConfig& config, const ModelSpec& model) {
  EngineConfig engine = config.engine;
  ResolveEngineDefaults(engine, EngineDevice::kCpu, model.max_position_embeddings);
  return engine;
}

// goodput serve's flags for `e` (sizes as plain numbers: exact).
std::vector<std::string> ServeArgs(const EngineConfig& e) {
  std::vector<std::string> args = {"--kv-cache-dtype", e.cache.kv_cache_dtype,
                                   "--scheduling-policy", SchedulingPolicyName(e.scheduler.policy)};
  const auto add = [&](const char* flag, int64_t v) {
    if (v > 0) args.insert(args.end(), {flag, std::to_string(v)});
  };
  add("--max-num-seqs", e.scheduler.max_num_seqs);
  add("--max-num-batched-tokens", e.scheduler.max_num_batched_tokens);
  add("--max-model-len", e.scheduler.max_model_len);
  add("--block-size", e.cache.block_size);
  add("--long-prefill-token-threshold", e.scheduler.long_prefill_token_threshold);
  if (e.cache.kv_cache_memory) add("--kv-cache-memory", *e.cache.kv_cache_memory);
  return args;
}

// goodput serve's flags for `config` (ServeArgs of its resolved engine).
Result<std::vector<std::string>> ServeArgsFor(const server::ServeConfig& config) {
  GOODPUT_ASSIGN_OR_RETURN(ModelSpec model, LoadModel(config.model));
  return ServeArgs(ResolvedEngine(config, model));
}

// The simulator of case `c`'s engine (its fleet of instances behind its
// router, as goodput serve's side runs) with `calibration`.
Result<std::unique_ptr<Target>> SimTargetFor(const ComparisonCase& c, const Calibration& calibration) {
  GOODPUT_ASSIGN_OR_RETURN(ModelSpec model, LoadModel(c.config.model));
  const EngineConfig engine = ResolvedEngine(c.config, model);
  GOODPUT_ASSIGN_OR_RETURN(SimSetup setup,
                           SetupCalibratedSimulation(model, PlanOptionsFor(calibration, engine), calibration));
  setup.options.replicas = c.replicas;
  setup.options.router = c.router;
  return std::unique_ptr<Target>(std::make_unique<SimTarget>(std::move(setup), "sim (calibrated)"));
}

int StepsApart(const std::vector<Comparison::Row>& rows, const std::optional<std::string>& a,
               const std::optional<std::string>& b) {
  const auto index = [&](const std::optional<std::string>& label) {
    if (!label) return -1;
    for (size_t i = 0; i < rows.size(); ++i) {
      if (rows[i].serve.label == *label) return static_cast<int>(i);
    }
    return -1;
  };
  return std::abs(index(a) - index(b));
}

// `spec` at `load` alone: one point of exactly `spec.repeat` repetitions (as
// goodput serve's side runs), no search, no varied flag.
MeasurementSpec OneLoad(const MeasurementSpec& spec, const ArrivalSpec& load) {
  MeasurementSpec one = spec;
  one.max_repeat = one.repeat;
  one.search_capacity = false;
  one.vary.clear();
  one.loads = {load};
  return one;
}

// `hooks` that also keep each repetition of a point, summarised alone, in `each`.
MeasurementHooks KeepingEachRun(const Workload& workload, const ArrivalSpec& load, MeasurementHooks hooks,
                                std::vector<PointResult>& each) {
  hooks.on_point = [&workload, load, &each, then = hooks.on_point](const Setting& setting, const PointResult& point,
                                                                    const std::vector<MeasuredRun>& runs) {
    each.clear();
    for (const MeasuredRun& run : runs) each.push_back(Summarise(workload, load, {run}));
    return then ? then(setting, point, runs) : Status::Ok();
  };
  return hooks;
}

// One load of case `c` on the simulator with `calibration`; each repetition
// alone goes to `each`.
Result<PointResult> MeasureLoadOnSim(const ComparisonCase& c, const Calibration& calibration, const ArrivalSpec& load,
                                     const MeasurementHooks& hooks, std::vector<PointResult>& each) {
  const MeasurementSpec one = OneLoad(c.spec, load);
  auto sim = Measure(
      one, [&](const Setting&) { return SimTargetFor(c, calibration); },
      KeepingEachRun(c.spec.workload, load, hooks, each));
  if (!sim.ok()) return sim.status().WithContext("simulator");
  return sim->front().sweep.points.front();
}

// One side of a comparison: its ladder, and each load's repetitions alone.
struct Side {
  SweepResult sweep;
  std::vector<std::vector<PointResult>> each;  // by load, then repetition
};

// Runs `measure(load, its index, where its repetitions go)` over `loads`.
using SideMeasure = std::function<Result<PointResult>(const ArrivalSpec&, size_t, std::vector<PointResult>&)>;
Result<Side> RunSide(const std::vector<ArrivalSpec>& loads, const SideMeasure& measure) {
  Side side;
  side.each.resize(loads.size());
  size_t i = 0;  // RunLadder runs the loads in order
  const auto one = [&](const ArrivalSpec& load) {
    const size_t at = i++;
    return measure(load, at, side.each[at]);
  };
  GOODPUT_ASSIGN_OR_RETURN(side.sweep, RunLadder(one, loads));
  return side;
}

Comparison Compare(const std::string& workload, const Side& serve_side, const Side& sim_side) {
  const SweepResult& serve = serve_side.sweep;
  const SweepResult& sim = sim_side.sweep;
  Comparison c;
  c.workload = workload;
  for (size_t i = 0; i < serve.points.size() && i < sim.points.size(); ++i) {
    Comparison::Row row;
    row.serve = serve.points[i], row.sim = sim.points[i];
    row.serve_runs = serve_side.each[i], row.sim_runs = sim_side.each[i];
    c.rows.push_back(std::move(row));
  }
  if (serve.capacity) c.serve_capacity = serve.points[*serve.capacity].label;
  if (sim.capacity) c.sim_capacity = sim.points[*sim.capacity].label;
  c.capacity_steps_apart = StepsApart(c.rows, c.serve_capacity, c.sim_capacity);
  c.serve_capacity_why = FormatCapacity(serve.points, serve.capacity, serve.capped);
  c.sim_capacity_why = FormatCapacity(sim.points, sim.capacity, sim.capped);
  return c;
}

// One repetition of one load of case `c` on goodput serve processes of its
// own (`c.replicas` of them, each logging its steps to its `step_logs` when
// given), the client routing among them by `c.router`.
Result<MeasuredRun> RunOnServe(const std::string& binary, const ComparisonCase& c, const ArrivalSpec& load,
                               int repetition, const std::vector<std::string>* step_logs) {
  GOODPUT_ASSIGN_OR_RETURN(const std::vector<std::string> serve_args, ServeArgsFor(c.config));
  std::vector<std::unique_ptr<EmbeddedTarget>> servers;
  for (int j = 0; j < c.replicas; ++j) {
    std::vector<std::string> args = serve_args;
    if (step_logs) args.insert(args.end(), {"--step-log", (*step_logs)[j]});
    GOODPUT_ASSIGN_OR_RETURN(auto server, EmbeddedTarget::Start(binary, c.config.model, args, {}));
    servers.push_back(std::move(server));
  }
  if (servers.size() == 1) return servers.front()->Run(c.spec.workload, load, repetition);
  client::LoadOptions fleet;
  fleet.model = c.config.model;
  fleet.router = c.router;
  std::vector<client::Endpoint> urls;
  for (const auto& server : servers) {
    GOODPUT_ASSIGN_OR_RETURN(client::Endpoint url, client::ParseEndpoint(server->ServedUrl()));
    urls.push_back(std::move(url));
  }
  fleet.endpoint = urls.front();
  fleet.more_endpoints.assign(urls.begin() + 1, urls.end());
  return HttpTarget(fleet).Run(c.spec.workload, load, repetition);
}

using RunsByLoad = std::vector<std::vector<std::vector<MeasuredRun>>>;  // by case, load, repetition

// Each case's side from `runs`: every load pooled over its repetitions.
Result<std::vector<Side>> PooledSides(const std::vector<ComparisonCase>& cases, const RunsByLoad& runs) {
  std::vector<Side> sides;
  for (size_t k = 0; k < cases.size(); ++k) {
    const Workload& w = cases[k].spec.workload;
    const auto pooled = [&](const ArrivalSpec& load, size_t i, std::vector<PointResult>& each) -> Result<PointResult> {
      for (const MeasuredRun& run : runs[k][i]) each.push_back(Summarise(w, load, {run}));
      return Summarise(w, load, runs[k][i]);
    };
    GOODPUT_ASSIGN_OR_RETURN(Side side, RunSide(cases[k].spec.loads, pooled));
    sides.push_back(std::move(side));
  }
  return sides;
}

// goodput serve's side of every case, in passes: pass r runs repetition r of
// every load of every case in turn, each on its own engine process (its steps
// apart from the others', in `logs` when given). Run load by load, a slow
// spell of the shared machine fell on whichever load ran in it: the median
// decode step of one or two requests differed by up to 9% (34% once) between
// a bench run's first load and its last four, in either direction from one
// run to the next. In passes every load, and every leave-one-out fit, spans
// the same minutes. With `rounds` 2 the passes run again after the last, the
// same repetitions (so the same requests): by round, then case.
Result<std::vector<RunsByLoad>> MeasureServeInPasses(const std::string& binary,
                                                     const std::vector<ComparisonCase>& cases, int rounds,
                                                     const StepLogs* logs, const MeasurementHooks& hooks) {
  int passes = 0;
  for (const ComparisonCase& c : cases) passes = std::max(passes, c.spec.repeat);
  std::vector<RunsByLoad> runs(rounds, RunsByLoad(cases.size()));
  for (RunsByLoad& round : runs) {
    for (size_t k = 0; k < cases.size(); ++k) round[k].resize(cases[k].spec.loads.size());
  }
  for (int pass = 0; pass < rounds * passes; ++pass) {
    const int round = pass / passes, r = pass % passes + 1;
    for (size_t k = 0; k < cases.size(); ++k) {
      const ComparisonCase& c = cases[k];
      for (size_t i = 0; i < c.spec.loads.size() && r <= c.spec.repeat; ++i) {
        const ArrivalSpec& load = c.spec.loads[i];
        if (hooks.progress) {
          hooks.progress(fmt::format("goodput serve, pass {} of {}: {} load {} ({} requests)", pass + 1,
                                     rounds * passes, c.spec.workload.name, LoadLabel(load), c.spec.workload.requests));
        }
        auto run = RunOnServe(binary, c, load, r, logs ? &logs->Of(k, i, r, round) : nullptr);
        if (!run.ok()) return run.status().WithContext("goodput serve at load " + LoadLabel(load));
        runs[round][k][i].push_back(*std::move(run));
      }
    }
  }
  return runs;
}

// Each round's sides (PooledSides).
Result<std::vector<std::vector<Side>>> PooledRounds(const std::vector<ComparisonCase>& cases,
                                                    const std::vector<RunsByLoad>& runs) {
  std::vector<std::vector<Side>> sides;
  for (const RunsByLoad& round : runs) {
    GOODPUT_ASSIGN_OR_RETURN(std::vector<Side> pooled, PooledSides(cases, round));
    sides.push_back(std::move(pooled));
  }
  return sides;
}

// The ledger run that keeps round `round` of case `k`'s goodput serve runs.
std::string KeptRunName(size_t k, const ComparisonCase& c, int round) {
  return fmt::format("sim_vs_serve: goodput serve, case {} ({}), {}", k + 1, c.spec.workload.name,
                     round == 0 ? "run" : "rerun");
}

// Keeps every round of every case's goodput serve runs in the ledger at
// `path`: one ledger run each (KeptRunName), every load a point (its summary
// in `sides`, as PooledRounds made them) with its repetitions and requests.
Status KeepServeRuns(const std::string& path, const std::vector<ComparisonCase>& cases,
                     const std::vector<RunsByLoad>& runs, const std::vector<std::vector<Side>>& sides) {
  GOODPUT_ASSIGN_OR_RETURN(std::unique_ptr<Ledger> ledger, Ledger::Open(path));
  const std::string cpu = HostCpuName(), host = HostName();
  std::vector<std::string> targets;  // each case's, the same in every round
  for (const ComparisonCase& c : cases) {
    GOODPUT_ASSIGN_OR_RETURN(const std::vector<std::string> serve_args, ServeArgsFor(c.config));
    std::string fleet = c.replicas > 1 ? fmt::format(" x {} (router {})", c.replicas, RouterPolicyName(c.router)) : "";
    targets.push_back(fmt::format("goodput serve {}{}", fmt::join(serve_args, " "), fleet));
  }
  for (size_t round = 0; round < runs.size(); ++round) {
    for (size_t k = 0; k < cases.size(); ++k) {
      const ComparisonCase& c = cases[k];
      const RunInfo info{KeptRunName(k, c, static_cast<int>(round)),
                         targets[k],
                         c.config.model,
                         cpu,
                         c.spec.workload.name,
                         "",
                         c.spec.workload.Slo().empty() ? "" : c.spec.workload.Slo().ToString(),
                         GOODPUT_VERSION,
                         host,
                         /*shard=*/""};
      GOODPUT_ASSIGN_OR_RETURN(const int64_t id, ledger->BeginRun(info));
      const Side& side = sides[round][k];
      for (size_t i = 0; i < c.spec.loads.size(); ++i) {
        std::vector<std::vector<RequestRecord>> records;
        for (const MeasuredRun& rep : runs[round][k][i]) records.push_back(rep.records);
        GOODPUT_RETURN_IF_ERROR(
            ledger->AddPoint(id, "", side.sweep.points[i], c.spec.workload.requests, side.each[i], records));
      }
      GOODPUT_RETURN_IF_ERROR(ledger->FinishRun(id, "complete"));
    }
  }
  return Status::Ok();
}

// Case `k`'s side of `round` as KeepServeRuns kept it, checked against the
// case: the same loads, requests and repetitions.
Result<Side> KeptSide(Ledger& ledger, const std::vector<StoredRun>& stored, size_t k, const ComparisonCase& c,
                      int round) {
  const std::string name = KeptRunName(k, c, round);
  const auto run =
      std::find_if(stored.rbegin(), stored.rend(), [&](const StoredRun& r) { return r.info.command == name; });
  if (run == stored.rend()) return Status::NotFound(fmt::format("no run '{}' in the ledger", name));
  GOODPUT_ASSIGN_OR_RETURN(std::vector<StoredPoint> points, ledger.GetPoints(run->id));
  if (points.size() != c.spec.loads.size()) {
    return Status::InvalidArgument(
        fmt::format("'{}' has {} loads, the case {}", name, points.size(), c.spec.loads.size()));
  }
  for (size_t i = 0; i < points.size(); ++i) {
    const StoredPoint& p = points[i];
    if (p.summary.label != LoadLabel(c.spec.loads[i]) || p.requests_per_run != c.spec.workload.requests ||
        static_cast<int>(p.repetitions.size()) != c.spec.repeat) {
      return Status::InvalidArgument(fmt::format(
          "'{}' measured load {} with {} requests and {} repetitions; the case runs load {} with {} and {}", name,
          p.summary.label, p.requests_per_run, p.repetitions.size(), LoadLabel(c.spec.loads[i]),
          c.spec.workload.requests, c.spec.repeat));
    }
  }
  const auto kept = [&](const ArrivalSpec&, size_t i, std::vector<PointResult>& each) -> Result<PointResult> {
    each = points[i].repetitions;
    return points[i].summary;
  };
  return RunSide(c.spec.loads, kept);
}

// The simulator's side of case `k`: each load with the fit to every other load's steps.
Result<Side> PredictLeavingOut(const ComparisonCase& c, size_t k, const StepLogs& logs, const MeasurementHooks& hooks,
                               std::vector<Calibration>& fits) {
  const auto predict = [&](const ArrivalSpec& load, size_t i, std::vector<PointResult>& each) -> Result<PointResult> {
    if (hooks.progress) hooks.progress(fmt::format("fitting every step but load {}'s", LoadLabel(load)));
    auto fit = CalibrateFromStepLogs(c.config, logs.AllBut(k, i));
    if (!fit.ok()) return fit.status().WithContext("fit leaving out load " + LoadLabel(load));
    fits.push_back(*fit);
    return MeasureLoadOnSim(c, *fit, load, hooks, each);
  };
  return RunSide(c.spec.loads, predict);
}

// Each load of case `k` on the simulator fitted to that load's own steps, and
// with `every_step`, the fit to every load's.
Status AddInSample(const ComparisonCase& c, size_t k, const StepLogs& logs, const Calibration& every_step,
                   const MeasurementHooks& hooks, Comparison& out) {
  for (size_t i = 0; i < c.spec.loads.size() && i < out.rows.size(); ++i) {
    const ArrivalSpec& load = c.spec.loads[i];
    if (hooks.progress) hooks.progress(fmt::format("fitting load {}'s own steps", LoadLabel(load)));
    auto fit = CalibrateFromStepLogs(c.config, logs.Of(k, i));
    if (!fit.ok()) return fit.status().WithContext("fit to load " + LoadLabel(load));
    std::vector<PointResult> each;
    GOODPUT_ASSIGN_OR_RETURN(out.rows[i].sim_in_sample, MeasureLoadOnSim(c, *fit, load, hooks, each));
    GOODPUT_ASSIGN_OR_RETURN(out.rows[i].sim_every_step, MeasureLoadOnSim(c, every_step, load, hooks, each));
  }
  return Status::Ok();
}

// Each row's figures from goodput serve's rerun (`rerun`: the same loads).
void AddRerun(const Side& rerun, Comparison& out) {
  for (size_t i = 0; i < out.rows.size() && i < rerun.sweep.points.size(); ++i) {
    out.rows[i].serve_rerun = rerun.sweep.points[i];
  }
}

// The simulator's side of every case against goodput serve's `serve` (by
// round, then case), fitted to the step logs of round 0.
Result<HeldOutComparison> PredictHeldOut(const std::vector<ComparisonCase>& cases,
                                         const std::vector<std::vector<Side>>& serve, const StepLogs& logs,
                                         const MeasurementHooks& hooks) {
  HeldOutComparison out;
  auto all = CalibrateFromStepLogs(cases.front().config, logs.AllBut(SIZE_MAX, SIZE_MAX));
  if (!all.ok()) return all.status().WithContext("fit to every step");
  out.all_steps = *std::move(all);
  for (size_t k = 0; k < cases.size(); ++k) {
    std::vector<Calibration> fits;
    GOODPUT_ASSIGN_OR_RETURN(Side sim, PredictLeavingOut(cases[k], k, logs, hooks, fits));
    out.cases.push_back(Compare(cases[k].spec.workload.name, serve[0][k], sim));
    if (serve.size() > 1) AddRerun(serve[1][k], out.cases.back());
    for (size_t i = 0; i < fits.size(); ++i) {
      out.cases.back().rows[i].fit_rms_log_error = fits[i].rms_log_error;
      out.cases.back().rows[i].fit_steps = fits[i].measurements;
    }
    GOODPUT_RETURN_IF_ERROR(AddInSample(cases[k], k, logs, out.all_steps, hooks, out.cases.back()));
  }
  return out;
}

Status CheckHeldOutCases(const std::vector<ComparisonCase>& cases) {
  if (cases.empty()) return Status::InvalidArgument("no case to compare");
  for (const ComparisonCase& c : cases) {
    if (c.config.model != cases.front().config.model) {
      return Status::InvalidArgument(fmt::format("the cases' steps are fitted together, so they must share one model: "
                                                 "'{}' and '{}'", cases.front().config.model, c.config.model));
    }
    if (c.spec.loads.empty()) return Status::InvalidArgument("a case without a load: " + c.spec.workload.name);
    GOODPUT_RETURN_IF_ERROR(CheckMeasurementSpec(c.spec).WithContext(c.spec.workload.name));
  }
  return Status::Ok();
}

}  // namespace

int64_t RequestsToBoundP99(const Workload& w, int repeat, int clients) {
  const double per_run = static_cast<double>((MinSampleToBoundPercentile(99) + repeat - 1) / repeat);
  const double by_share = per_run / (1 - w.warmup.fraction - w.cooldown.fraction);
  const double by_wave = (per_run + clients) / (1 - w.cooldown.fraction);
  return static_cast<int64_t>(std::ceil(std::max(by_share, by_wave))) + 2;  // + rounding of the margins
}

Result<HeldOutComparison> CompareSimToServeHeldOut(const std::string& goodput_binary,
                                                   const std::vector<ComparisonCase>& cases,
                                                   const std::function<void(const std::string&)>& progress,
                                                   const HeldOutOptions& options) {
  GOODPUT_RETURN_IF_ERROR(CheckHeldOutCases(cases));
  MeasurementHooks hooks;
  hooks.progress = progress;
  const std::string& dir = options.step_log_dir;
  if (!dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) return Status::InvalidArgument(fmt::format("cannot create {}: {}", dir, ec.message()));
  }
  const int rounds = options.rerun_serve ? 2 : 1;
  const StepLogs logs(cases, dir, rounds);
  GOODPUT_ASSIGN_OR_RETURN(auto runs, MeasureServeInPasses(goodput_binary, cases, rounds, &logs, hooks));
  GOODPUT_ASSIGN_OR_RETURN(auto serve, PooledRounds(cases, runs));
  if (!options.serve_ledger.empty()) {
    GOODPUT_RETURN_IF_ERROR(
        KeepServeRuns(options.serve_ledger, cases, runs, serve).WithContext("keeping goodput serve's runs"));
  }
  return PredictHeldOut(cases, serve, logs, hooks);
}

Result<HeldOutComparison> ReplaySimToServeHeldOut(const std::vector<ComparisonCase>& cases,
                                                  const std::function<void(const std::string&)>& progress,
                                                  const HeldOutOptions& options) {
  GOODPUT_RETURN_IF_ERROR(CheckHeldOutCases(cases));
  if (options.step_log_dir.empty() || options.serve_ledger.empty()) {
    return Status::InvalidArgument(
        "a replay needs the step logs' directory and the ledger goodput serve's runs were kept in");
  }
  if (!std::filesystem::exists(options.serve_ledger)) {
    return Status::NotFound("no ledger of goodput serve's runs at " + options.serve_ledger);
  }
  MeasurementHooks hooks;
  hooks.progress = progress;
  const int rounds = options.rerun_serve ? 2 : 1;
  const StepLogs logs(cases, options.step_log_dir, rounds);
  GOODPUT_ASSIGN_OR_RETURN(std::unique_ptr<Ledger> ledger, Ledger::Open(options.serve_ledger));
  GOODPUT_ASSIGN_OR_RETURN(std::vector<StoredRun> stored, ledger->ListRuns());
  std::vector<std::vector<Side>> serve(rounds);
  for (int round = 0; round < rounds; ++round) {
    for (size_t k = 0; k < cases.size(); ++k) {
      GOODPUT_ASSIGN_OR_RETURN(Side side, KeptSide(*ledger, stored, k, cases[k], round));
      serve[round].push_back(std::move(side));
    }
  }
  return PredictHeldOut(cases, serve, logs, hooks);
}

Result<Comparison> CompareSimToServe(const std::string& goodput_binary, const server::ServeConfig& config,
                                     const Calibration& calibration, const MeasurementSpec& spec,
                                     const std::function<void(const std::string&)>& progress) {
  GOODPUT_RETURN_IF_ERROR(CheckMeasurementSpec(spec));
  MeasurementHooks hooks;
  hooks.progress = progress;
  const std::vector<ComparisonCase> cases = {{config, spec}};
  GOODPUT_ASSIGN_OR_RETURN(auto runs, MeasureServeInPasses(goodput_binary, cases, 1, nullptr, hooks));
  GOODPUT_ASSIGN_OR_RETURN(auto serve_sides, PooledRounds(cases, runs));
  const Side& serve = serve_sides.front().front();
  GOODPUT_ASSIGN_OR_RETURN(Side sim,
                           RunSide(spec.loads, [&](const ArrivalSpec& load, size_t, std::vector<PointResult>& each) {
                             return MeasureLoadOnSim(cases.front(), calibration, load, hooks, each);
                           }));
  Comparison c = Compare(spec.workload.name, serve, sim);
  for (auto& r : c.rows) {
    r.fit_rms_log_error = calibration.rms_log_error;
    r.fit_steps = calibration.measurements;
  }
  return c;
}

}  // namespace goodput
