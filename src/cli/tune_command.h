// `goodput tune`: engine settings searched together on the simulator, the
// best few confirmed on the real target, their outputs compared with the
// engine as configured, and the answer as flags to paste (tune/tune.h).
#pragma once

#include <CLI/CLI.hpp>

namespace goodput {

void AddTuneCommand(CLI::App& app);

}  // namespace goodput
