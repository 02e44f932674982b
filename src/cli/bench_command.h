// `goodput bench` (one load point), `goodput sweep` (a ladder of loads with
// repetitions) and `goodput capacity` (the highest load that holds every
// class's SLO), against any Target: an OpenAI-compatible URL, `embedded`
// (goodput serve started for the run) or `sim:GPU`.
#pragma once

#include <CLI/CLI.hpp>

namespace goodput {

void AddBenchCommands(CLI::App& app);

}  // namespace goodput
