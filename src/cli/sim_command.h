// `goodput sim` and `goodput sim capacity`.
#pragma once

#include <CLI/CLI.hpp>

namespace goodput {

void AddSimCommand(CLI::App& app);

}  // namespace goodput
