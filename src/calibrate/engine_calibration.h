// Calibrations from goodput's own engine: the CPU engine `serve` would run
// with a CpuEngineConfig, measured step by step and fitted; and the plan options
// under which the simulator reproduces that engine's pool (the CPU as a
// "hardware": vLLM's CPU defaults, the same KV pool).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "calibrate/calibration.h"
#include "core/status.h"
#include "cpu/cpu_engine.h"
#include "cpu/step_grid.h"
#include "plan/planner.h"
#include "sim/setup.h"

namespace goodput {

// Measures `config`'s engine on this machine (cpu::StepGrid) and fits the cost
// model to its steps; the hardware is this CPU (memory: the host's).
Result<Calibration> CalibrateCpuEngine(const cpu::CpuEngineConfig& config, const cpu::StepGrid& grid,
                                       const std::function<void(const std::string&)>& progress = {});

// Fits the cost model to the steps goodput serve took while serving (its
// --step-log FILE; several logs of the same model pool their steps), for the
// model `config` names. At most `max_steps` are fitted: every step of a rare
// shape (a long prefill), the common ones (decodes) thinned evenly to the
// same count per shape, each weighted by the serving time it stands for. The
// residuals group every logged step by shape, fitted or not.
Result<Calibration> CalibrateFromStepLogs(const cpu::CpuEngineConfig& config, const std::vector<std::string>& step_logs,
                                          size_t max_steps = 1500);

// Plan options for simulating on `calibration`'s hardware with `engine`
// settings: the hardware's memory as total, the CPU defaults when it is the
// CPU engine.
PlanOptions PlanOptionsFor(const Calibration& calibration, EngineConfig engine);

// The simulator of `model` on `calibration`'s hardware and factors with
// `options` (PlanOptionsFor's, or a command's). On the CPU engine the KV pool
// is counted by the CPU engine's own layout (int8 KV with its scales), so the
// simulator's pool is goodput serve's, block for block. With weights in
// another format than the calibration was fitted with, its factors are
// carried over through the card's catalog entry (FactorsForWeights); a card
// without one is an error.
Result<SimSetup> SetupCalibratedSimulation(const ModelSpec& model, const PlanOptions& options,
                                           const Calibration& calibration);

}  // namespace goodput
