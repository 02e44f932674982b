#include "calibrate/engine_calibration.h"

#include <algorithm>
#include <chrono>
#include <ctime>
#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/clock.h"
#include "core/host.h"
#include "cpu/cpu_runner.h"
#include "engine/step_log.h"
#include "cpu/step_fit.h"

namespace goodput {
namespace {

std::string Today() {
  const std::time_t now = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d", std::gmtime(&now));
  return buf;
}

// `setup`'s cost model with `calibration`'s factors carried to the weights
// format the plan resolved, when the calibration was fitted with another
// (through its card's catalog entry: a calibration's own hardware keeps only
// the peak it was fitted at).
Status MatchWeightFormat(const Calibration& calibration, SimSetup& setup) {
  const std::string& precision = setup.plan.precision.name;
  if (calibration.weight_precision.empty() || calibration.weight_precision == precision) return Status::Ok();
  const Result<HardwareSpec> entry =
      calibration.hardware.cpu ? Result<HardwareSpec>(Status::NotFound("the CPU")) : FindGpu(calibration.hardware.name);
  if (!entry.ok()) {
    return Status::InvalidArgument(fmt::format(
        "the calibration was fitted with {} weights on {}, which has no catalog entry to carry it to {} weights: fit "
        "one with {} weights",
        calibration.weight_precision, calibration.hardware.name, precision, precision));
  }
  GOODPUT_ASSIGN_OR_RETURN(const CostFactors f, FactorsForWeights(calibration.factors, *entry,
                                                                  calibration.weight_precision, precision));
  setup.cost = std::make_unique<CostModel>(setup.cost->model(), f);
  return Status::Ok();
}

}  // namespace

PlanOptions PlanOptionsFor(const Calibration& calibration, EngineConfig engine) {
  PlanOptions o;
  o.gpu = calibration.hardware.name;
  o.gpu_arch = calibration.hardware.arch;
  o.total_memory = calibration.hardware.TotalMemoryBytes();
  o.total_is_nominal = calibration.hardware.total_is_nominal();
  o.cpu = calibration.hardware.cpu;
  o.engine = std::move(engine);
  return o;
}

Result<SimSetup> SetupCalibratedSimulation(const ModelSpec& model, const PlanOptions& options,
                                           const Calibration& calibration) {
  PlanOptions planned = options;
  const std::string kv_dtype = options.engine.cache.kv_cache_dtype;
  if (kv_dtype == "int8") planned.engine.cache.kv_cache_dtype = "fp8";  // the planner's type of one byte
  GOODPUT_ASSIGN_OR_RETURN(SimSetup setup,
                           SetupSimulation(model, planned, calibration.hardware, &calibration.factors));
  if (calibration.engine_loop.loop.measured) setup.options.engine_loop = calibration.engine_loop.loop;
  GOODPUT_RETURN_IF_ERROR(MatchWeightFormat(calibration, setup));
  if (!calibration.hardware.cpu) return setup;
  const CacheConfig& cache = setup.plan.options.engine.cache;  // sizes resolved
  GOODPUT_ASSIGN_OR_RETURN(cpu::KvFormat format, cpu::KvFormatFor(kv_dtype, model.dtype));
  const cpu::CpuKvLayout layout = cpu::MakeCpuKvLayout(model, cache.block_size);
  setup.options.kv_groups = layout.groups;
  setup.options.num_blocks = cpu::CpuKvBlocksFor(model, layout, format, cache.block_size, *cache.kv_cache_memory);
  setup.plan.capacity.num_blocks = setup.options.num_blocks;
  return setup;
}

namespace {

// The fit of `steps` taken by `engine` (its model and settings are used); the
// hardware is this CPU. The residual rows are of `judged` when given (every
// step the fitted ones were drawn from), else of the fitted steps.
Result<Calibration> FitCpuEngine(const cpu::CpuEngine& engine, const std::vector<cpu::MeasuredStep>& steps,
                                 const std::string& how, const std::vector<cpu::MeasuredStep>* judged = nullptr) {
  GOODPUT_ASSIGN_OR_RETURN(const DeployedModel deployed, cpu::DeployedCpuModel(engine));
  GOODPUT_ASSIGN_OR_RETURN(const cpu::StepFit fit, cpu::FitSteps(deployed, steps));
  Calibration c;
  c.factors = fit.factors;
  c.residuals = judged ? cpu::ShapeResiduals(deployed, c.factors, *judged) : fit.residuals;
  c.rms_log_error = fit.rms_log_error;
  c.measurements = fit.measurements;
  c.hardware.name = "cpu";
  c.hardware.display = HostCpuName();
  c.hardware.cpu = true;
  c.hardware.memory_bytes = HostMemoryBytes();
  c.hardware.memory_bandwidth = c.factors.bandwidth;
  c.hardware.bf16_flops = c.factors.peak_flops;
  c.model = engine.model.name;
  c.weight_precision = deployed.weight_precision;
  c.source = fmt::format("{}: {} steps of goodput serve's CPU engine ({}, {} KV) on {}, {}", how, steps.size(),
                         engine.model.name, engine.config.cache.kv_cache_dtype, HostCpuName(), Today());
  return c;
}

// "1", "2", "3-4", "5-8", ...: powers of two, for grouping steps by shape.
std::string Bucket(int64_t n) {
  if (n <= 2) return std::to_string(n);
  int64_t hi = 2;
  while (hi < n) hi *= 2;
  return fmt::format("{}-{}", hi / 2 + 1, hi);
}

// "<256", "256-1K", "1K-4K", ">=4K": a few context classes, each 4x the
// last, so that a shape's steps stay many enough to sample.
std::string ContextBucket(int64_t tokens) {
  if (tokens < 256) return "<256";
  if (tokens < 1024) return "256-1K";
  if (tokens < 4096) return "1K-4K";
  return ">=4K";
}

cpu::MeasuredStep FromLog(const LoggedStep& logged) {
  cpu::MeasuredStep s;
  s.requests = logged.requests;
  s.seconds = logged.seconds;
  int64_t decodes = 0, prefill = 0, context = 0;
  for (const StepRequest& r : logged.requests) {
    if (r.num_new == 1) ++decodes;
    else prefill += r.num_new;
    context += r.num_computed;
  }
  // Context is part of the shape: decodes of 3 requests at 100 tokens and at
  // 2,000 cost apart (attention, cache misses), and a log that holds far more
  // of the first would otherwise fit the second almost unseen.
  const int64_t per_request = logged.requests.empty() ? 0 : context / static_cast<int64_t>(logged.requests.size());
  s.shape = prefill == 0 ? fmt::format("decode {} requests", Bucket(decodes))
                         : fmt::format("prefill {} tokens + {} decodes", Bucket(prefill), Bucket(decodes));
  s.shape += fmt::format(" at {} context", ContextBucket(per_request));
  return s;
}

// The most steps of one shape such that at most `max_steps` are fitted in
// all: a server's log is mostly decodes, and an even spread over it would
// leave the few long prefills (most of the time spent) nearly unfitted.
size_t ShapeCap(const std::map<std::string, std::vector<size_t>>& by_shape, size_t max_steps) {
  size_t cap = 1;
  for (;; ++cap) {
    size_t total = 0, capped = 0;
    for (const auto& [shape, steps] : by_shape) {
      total += std::min(cap + 1, steps.size());
      capped += steps.size() > cap;
    }
    if (total > max_steps || capped == 0) return cap;
  }
}

}  // namespace

Result<Calibration> CalibrateCpuEngine(const cpu::CpuEngineConfig& config, const cpu::StepGrid& grid,
                                       const std::function<void(const std::string&)>& progress) {
  GOODPUT_ASSIGN_OR_RETURN(cpu::CpuEngine engine, cpu::LoadCpuEngine(config));
  RealClock clock;
  GOODPUT_ASSIGN_OR_RETURN(std::vector<cpu::MeasuredStep> steps,
                           cpu::MeasureSteps(*engine.runner, engine.layout.groups, engine.num_blocks,
                                             engine.config.scheduler.max_model_len, grid, clock, progress));
  return FitCpuEngine(engine, steps, "goodput calibrate steps");
}

Result<Calibration> CalibrateFromStepLogs(const cpu::CpuEngineConfig& config, const std::vector<std::string>& step_logs,
                                          size_t max_steps) {
  std::vector<std::vector<LoggedStep>> logs;  // one clock each: the loop is fitted log by log
  for (const std::string& path : step_logs) {
    GOODPUT_ASSIGN_OR_RETURN(std::vector<LoggedStep> log, ReadStepLog(path));
    logs.push_back(std::move(log));
  }
  if (logs.empty()) return Status::InvalidArgument("no step log given");
  // The fit needs the model and the resolved settings, not weights or a pool.
  GOODPUT_ASSIGN_OR_RETURN(cpu::CpuEngine engine, cpu::LoadCpuEngineSettings(config));
  std::vector<cpu::MeasuredStep> every;
  for (const auto& log : logs) {
    for (const LoggedStep& l : log) every.push_back(FromLog(l));
  }
  std::map<std::string, std::vector<size_t>> by_shape;  // indices into `every`, in log order
  for (size_t i = 0; i < every.size(); ++i) by_shape[every[i].shape].push_back(i);
  std::vector<cpu::MeasuredStep> steps;
  const size_t cap = ShapeCap(by_shape, max_steps);
  for (const auto& [shape, all] : by_shape) {
    const size_t n = std::min(cap, all.size());
    for (size_t i = 0; i < n; ++i) {
      // Weighted by the time the step stands for: the fit is best where the
      // server spent its time (the thinned steps' share included).
      cpu::MeasuredStep s = every[all[i * all.size() / n]];
      s.weight = s.seconds * static_cast<double>(all.size()) / static_cast<double>(n);
      steps.push_back(std::move(s));
    }
  }
  // The residuals over every logged step, not the thinned ones: a shape's
  // few dozen fitted steps can miss its mean by the odd stall they include
  // (in one session's logs, decodes of 1 request at 1K-4K context: 17.2 ms
  // over the 30 fitted, 16.4 over all 1,190).
  GOODPUT_ASSIGN_OR_RETURN(
      Calibration c,
      FitCpuEngine(engine, steps, fmt::format("goodput serve's step log ({})", fmt::join(step_logs, ", ")), &every));
  c.engine_loop = FitEngineLoop(logs);
  return c;
}

}  // namespace goodput
