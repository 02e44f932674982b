// Calibrations from goodput's own engine: the CPU engine `serve` would run
// with a ServeConfig, measured step by step and fitted; and the plan options
// under which the simulator reproduces that engine's pool (the CPU as a
// "hardware": vLLM's CPU defaults, the same KV pool).
#pragma once

#include <functional>
#include <string>

#include "calibrate/calibration.h"
#include "calibrate/cpu_steps.h"
#include "core/status.h"
#include "plan/planner.h"
#include "server/serving.h"

namespace goodput {

// Measures `config`'s engine on this machine (StepGrid) and fits the cost
// model to its steps; the hardware is this CPU (memory: the host's).
Result<Calibration> CalibrateCpuEngine(const server::ServeConfig& config, const StepGrid& grid,
                                       const std::function<void(const std::string&)>& progress = {});

// Plan options for simulating on `calibration`'s hardware with `engine`
// settings: the hardware's memory as total, the CPU defaults when it is the
// CPU engine. (KV cache dtype int8 on the CPU plans as fp8: the same bytes.)
PlanOptions PlanOptionsFor(const Calibration& calibration, EngineConfig engine);

}  // namespace goodput
