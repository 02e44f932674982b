// `goodput compare-outputs`: the same prompts asked of two engines (two
// servers, or one engine under two settings), their answers compared token by
// token and by log-probability (tune/output_diff.h).
#pragma once

#include <CLI/CLI.hpp>

namespace goodput {

void AddCompareOutputsCommand(CLI::App& app);

}  // namespace goodput
