// `goodput sim` and `goodput sim capacity`.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "hw/hardware.h"
#include "measure/target.h"
#include "sim/setup.h"

namespace goodput {

void AddSimCommand(CLI::App& app);

// The simulator as a measurement target (`--target sim:GPU`, or
// `sim:FILE` for a calibration file), configured by goodput sim's own engine
// flags, e.g. {"--max-num-seqs", "64"}.
Result<std::unique_ptr<Target>> MakeSimTarget(const std::string& model, const std::string& gpu,
                                              const std::vector<std::string>& flags);

// The deployment MakeSimTarget would simulate (its plan, cost model and
// options) and the hardware it runs on: what a fit of the simulator to a
// target's measurements starts from.
struct SimDeployment {
  SimSetup setup;
  HardwareSpec hardware;
  std::string calibration_model;  // the model a --calibration was fitted on ("" without one)
};
Result<SimDeployment> MakeSimDeployment(const std::string& model, const std::string& gpu,
                                        const std::vector<std::string>& flags);

}  // namespace goodput
