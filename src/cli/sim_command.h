// `goodput sim` and `goodput sim capacity`.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "measure/target.h"

namespace goodput {

void AddSimCommand(CLI::App& app);

// The simulator as a measurement target (`--target sim:GPU`, or
// `sim:FILE` for a calibration file), configured by goodput sim's own engine
// flags, e.g. {"--max-num-seqs", "64"}.
Result<std::unique_ptr<Target>> MakeSimTarget(const std::string& model, const std::string& gpu,
                                              const std::vector<std::string>& flags);

}  // namespace goodput
