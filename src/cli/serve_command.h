// `goodput serve`: the CPU engine behind the OpenAI-compatible HTTP server.
#pragma once

#include <CLI/CLI.hpp>

namespace goodput {

void AddServeCommand(CLI::App& app);

}  // namespace goodput
