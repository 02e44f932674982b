// `goodput calibrate steps` (goodput serve's own steps on this CPU) and
// `goodput calibrate ledger RUN` (a ledger run of any target, fitted through
// the simulator): write a calibration file for `goodput sim --calibration`.
#pragma once

#include <CLI/CLI.hpp>

namespace goodput {

void AddCalibrateCommand(CLI::App& app);

}  // namespace goodput
