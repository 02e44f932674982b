#include "calibrate/engine_calibration.h"

#include <chrono>
#include <ctime>

#include <fmt/format.h>

#include "core/clock.h"
#include "core/host.h"
#include "cpu/cpu_runner.h"
#include "plan/deployment.h"

namespace goodput {
namespace {

std::string Today() {
  const std::time_t now = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d", std::gmtime(&now));
  return buf;
}

}  // namespace

PlanOptions PlanOptionsFor(const Calibration& calibration, EngineConfig engine) {
  PlanOptions o;
  o.gpu = calibration.hardware.name;
  o.total_memory = calibration.hardware.memory_bytes;
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
  if (!calibration.hardware.cpu) return setup;
  const CacheConfig& cache = setup.plan.options.engine.cache;  // sizes resolved
  GOODPUT_ASSIGN_OR_RETURN(cpu::KvFormat format, cpu::KvFormatFor(kv_dtype, model.dtype));
  const cpu::CpuKvLayout layout = cpu::MakeCpuKvLayout(model, cache.block_size);
  setup.options.kv_groups = layout.groups;
  setup.options.num_blocks = cpu::CpuKvBlocksFor(model, layout, format, cache.block_size, *cache.kv_cache_memory);
  setup.plan.capacity.num_blocks = setup.options.num_blocks;
  return setup;
}

Result<Calibration> CalibrateCpuEngine(const server::ServeConfig& config, const StepGrid& grid,
                                       const std::function<void(const std::string&)>& progress) {
  GOODPUT_ASSIGN_OR_RETURN(server::CpuEngine engine, server::LoadCpuEngine(config));
  RealClock clock;
  GOODPUT_ASSIGN_OR_RETURN(std::vector<MeasuredStep> steps,
                           MeasureSteps(*engine.runner, engine.layout.groups, engine.num_blocks,
                                        engine.config.scheduler.max_model_len, grid, clock, progress));
  Calibration shell;
  shell.hardware.name = "cpu";
  shell.hardware.display = HostCpuName();
  shell.hardware.cpu = true;
  shell.hardware.memory_bytes = HostMemoryBytes();
  EngineConfig planned = engine.config;
  planned.scheduler.eos_token_id = -1;
  GOODPUT_ASSIGN_OR_RETURN(SimSetup setup, SetupCalibratedSimulation(engine.model, PlanOptionsFor(shell, planned), shell));
  const Plan& plan = setup.plan;
  GOODPUT_ASSIGN_OR_RETURN(Calibration c, FitSteps(DeployedModelFromPlan(plan), steps));
  c.hardware = shell.hardware;
  c.hardware.memory_bandwidth = c.factors.bandwidth;
  c.hardware.bf16_flops = c.factors.peak_flops;
  c.model = engine.model.name;
  c.source = fmt::format("goodput calibrate steps: {} steps of goodput serve's CPU engine ({}, {} KV) on {}, {}",
                         steps.size(), engine.model.name, engine.config.cache.kv_cache_dtype, HostCpuName(), Today());
  return c;
}

}  // namespace goodput
