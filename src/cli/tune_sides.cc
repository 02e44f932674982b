#include "cli/tune_sides.h"

#include <filesystem>
#include <map>
#include <memory>

#include <fmt/format.h>

#include "calibrate/engine_calibration.h"
#include "calibrate/ledger_fit.h"
#include "cli/engine_flags.h"
#include "cli/sim_command.h"

namespace goodput {
namespace {

std::vector<std::string> Concat(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

TargetFactory SimFactory(const std::string& model, const std::string& where, const std::string& args) {
  return [=](const Setting& s) { return MakeSimTarget(model, where, Concat(SplitArgs(args), s.Args())); };
}

// What the factories share: each embedded setting's step log, and how many
// fits have been written.
struct Shared {
  std::map<std::string, std::string> step_logs;  // by setting label
  int fits = 0;
};

// goodput serve's CPU engine with the settings in `engine_args` (its other flags are
// left to the server).
Result<cpu::CpuEngineConfig> CpuEngineConfigFor(const std::string& model, const std::string& engine_args) {
  EngineArgs e;
  CLI::App app;
  AddEngineFlags(app, e, kEngineSizeFlags | kEngineSchedulingFlags);
  app.allow_extras();
  std::vector<std::string> args = SplitArgs(engine_args);
  std::reverse(args.begin(), args.end());  // CLI11 parses a vector from its back
  try {
    app.parse(args);
  } catch (const CLI::ParseError& ex) {
    return Status::InvalidArgument(fmt::format("--engine-args '{}': {}", engine_args, ex.what()));
  }
  cpu::CpuEngineConfig c;
  c.model = model;
  GOODPUT_ASSIGN_OR_RETURN(c.engine, ToEngineConfig(e));
  return c;
}

std::string ModelOf(const TuneSideArgs& a) {
  if (!a.sim_model.empty()) return a.sim_model;
  return a.t.model.empty() && KindOf(a.t) == TargetKind::kEmbedded ? "goodput-small" : a.t.model;
}

std::string SimArgsOf(const TuneSideArgs& a) { return a.sim_args.empty() ? a.t.engine_args : a.sim_args; }

std::string NextFitPath(const TuneSideArgs& a, Shared& shared) {
  return (std::filesystem::path(a.work_dir) / fmt::format("fit-{}.json", ++shared.fits)).string();
}

// goodput serve fitted to the steps it logged while the measured settings ran.
Result<TargetFactory> FitToStepLogs(const TuneSideArgs& a, Shared& shared, const std::vector<Measured>& measured) {
  std::vector<std::string> logs;
  for (const Measured& m : measured) {
    auto it = shared.step_logs.find(m.setting.Label());
    if (m.failed.empty() && it != shared.step_logs.end()) logs.push_back(it->second);
  }
  if (logs.empty()) return Status::FailedPrecondition("no step log to fit the simulator to");
  GOODPUT_ASSIGN_OR_RETURN(cpu::CpuEngineConfig config, CpuEngineConfigFor(ModelOf(a), a.t.engine_args));
  GOODPUT_ASSIGN_OR_RETURN(Calibration c, CalibrateFromStepLogs(config, logs));
  const std::string path = NextFitPath(a, shared);
  GOODPUT_RETURN_IF_ERROR(SaveCalibration(c, path));
  return SimFactory(ModelOf(a), path, SimArgsOf(a));
}

// The simulator (`where`: a card or a calibration file) fitted to every load
// the target measured, each on its own setting's deployment.
Result<TargetFactory> FitToMeasurements(const TuneSideArgs& a, const std::string& where, Shared& shared,
                                        const std::vector<Measured>& measured, const Workload& workload) {
  std::vector<std::unique_ptr<SimDeployment>> deployments;
  std::vector<MeasuredLoad> loads;
  for (const Measured& m : measured) {
    if (!m.failed.empty()) continue;
    GOODPUT_ASSIGN_OR_RETURN(SimDeployment d,
                             MakeSimDeployment(ModelOf(a), where, Concat(SplitArgs(SimArgsOf(a)), m.setting.Args())));
    deployments.push_back(std::make_unique<SimDeployment>(std::move(d)));
    for (const PointResult& p : m.result.sweep.points) {
      if (!(p.ttft.p50 > 0) || !(p.tpot.p50 > 0) || !(p.throughput > 0)) continue;
      Workload ran = workload;
      ran.requests = std::min<int64_t>(ran.requests, 400);
      loads.push_back(MeasuredLoad{std::move(ran), p.load, m.setting.Label() + " at " + p.label, p.ttft.p50, p.tpot.p50,
                                   p.throughput, std::max(1, p.repeats), &deployments.back()->setup});
    }
  }
  if (loads.empty()) return Status::FailedPrecondition("the target measured no load with TTFT, TPOT and throughput");
  GOODPUT_ASSIGN_OR_RETURN(Calibration c,
                           FitMeasuredLoads(loads, deployments.front()->setup, deployments.front()->hardware,
                                            "goodput tune: the target's capacity searches"));
  const std::string path = NextFitPath(a, shared);
  GOODPUT_RETURN_IF_ERROR(SaveCalibration(c, path));
  return SimFactory(ModelOf(a), path, SimArgsOf(a));
}

Setting DefaultsOf(const EngineConfig& e) {
  Setting s;
  const auto add = [&](const char* flag, const std::string& value) { s.flags.push_back({flag, value}); };
  add("max-num-seqs", std::to_string(e.scheduler.max_num_seqs));
  add("max-num-batched-tokens", std::to_string(e.scheduler.max_num_batched_tokens));
  add("kv-cache-dtype", e.cache.kv_cache_dtype);
  add("long-prefill-token-threshold", std::to_string(e.scheduler.long_prefill_token_threshold));
  add("max-offline-seqs", std::to_string(e.scheduler.max_offline_seqs));
  add("scheduling-policy", SchedulingPolicyName(e.scheduler.policy));
  add("num-speculative-tokens", std::to_string(e.scheduler.num_speculative_tokens));
  if (e.cache.block_size > 0) add("block-size", std::to_string(e.cache.block_size));
  if (e.cache.kv_cache_memory) add("kv-cache-memory", std::to_string(*e.cache.kv_cache_memory));
  return s;
}

}  // namespace

Result<Setting> EngineDefaults(const TuneSideArgs& a) {
  const TargetKind kind = KindOf(a.t);
  if (kind == TargetKind::kEmbedded && a.sim.empty()) {
    GOODPUT_ASSIGN_OR_RETURN(cpu::CpuEngineConfig config, CpuEngineConfigFor(ModelOf(a), a.t.engine_args));
    GOODPUT_ASSIGN_OR_RETURN(cpu::CpuEngine engine, cpu::LoadCpuEngineSettings(config));
    return DefaultsOf(engine.config);
  }
  const std::string where =
      kind == TargetKind::kSim ? a.t.target.substr(4) : a.sim.substr(a.sim.rfind("sim:", 0) == 0 ? 4 : 0);
  GOODPUT_ASSIGN_OR_RETURN(SimDeployment d, MakeSimDeployment(ModelOf(a), where, SplitArgs(SimArgsOf(a))));
  Setting s = DefaultsOf(d.setup.plan.options.engine);
  const PlanOptions& o = d.setup.plan.options;
  if (o.mem_fraction_static)
    s.flags.push_back({"mem-fraction-static", fmt::format("{:g}", *o.mem_fraction_static)});
  else
    s.flags.push_back({"gpu-memory-utilization", fmt::format("{:g}", o.gpu_memory_utilization)});
  return s;
}

std::string DefaultSpace(TargetKind kind) {
  if (kind == TargetKind::kEmbedded) {
    return "max-num-seqs=4..64, max-num-batched-tokens=256..2048, kv-cache-dtype=auto|int8";
  }
  return "max-num-seqs=16..1024, max-num-batched-tokens=512..16384, gpu-memory-utilization=0.80..0.95, "
         "kv-cache-dtype=auto|fp8";
}

Result<TuneSides> MakeTuneSides(const TuneSideArgs& a, const Workload& workload) {
  const TargetKind kind = KindOf(a.t);
  if (kind == TargetKind::kSim && !a.sim.empty()) {
    return Status::InvalidArgument("--sim: the target is the simulator already");
  }
  if (kind == TargetKind::kUrl && a.sim.empty()) {
    return Status::InvalidArgument(
        "--target URL needs --sim sim:GPU or sim:FILE (a calibration): the simulator the "
        "settings are searched on");
  }
  if (!a.sim.empty() && a.sim.rfind("sim:", 0) != 0) {
    return Status::InvalidArgument("--sim must be sim:GPU or sim:FILE, e.g. sim:h100");
  }
  if (kind == TargetKind::kSim && a.recalibrate) {
    return Status::InvalidArgument(
        "--recalibrate fits the simulator to a real target's runs; the target is the simulator");
  }
  if (!a.confirm && a.recalibrate)
    return Status::InvalidArgument("--recalibrate needs the confirmation runs (no --no-confirm)");
  auto shared = std::make_shared<Shared>();
  TuneSides sides;
  const std::string where = kind == TargetKind::kSim ? a.t.target.substr(4) : a.sim.empty() ? "" : a.sim.substr(4);
  if (!where.empty()) sides.simulator = SimFactory(ModelOf(a), where, SimArgsOf(a));
  if (kind == TargetKind::kSim || !a.confirm) return sides;
  const bool logs = kind == TargetKind::kEmbedded;
  sides.target = [a, shared, logs](const Setting& s) -> Result<std::unique_ptr<Target>> {
    TargetArgs t = a.t;
    if (logs) {
      const std::string log =
          (std::filesystem::path(a.work_dir) / fmt::format("steps-{}.log", shared->step_logs.size() + 1)).string();
      t.engine_args += " --step-log " + log;
      shared->step_logs[s.Label()] = log;
    }
    return MakeTarget(t, s);
  };
  if (logs) {
    sides.fit = [a, shared](const std::vector<Measured>& m) { return FitToStepLogs(a, *shared, m); };
    sides.fit_before_search = where.empty();
  } else {
    sides.fit = [a, where, shared, workload](const std::vector<Measured>& m) {
      return FitToMeasurements(a, where, *shared, m, workload);
    };
  }
  return sides;
}

}  // namespace goodput
