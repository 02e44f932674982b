// `goodput plan`: flags, their parsing into PlanOptions, and the run.
#pragma once

#include <CLI/CLI.hpp>

namespace goodput {

// Adds the `plan` subcommand to `app`; it runs when parsed.
void AddPlanCommand(CLI::App& app);

}  // namespace goodput
