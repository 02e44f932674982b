// `goodput workload from FILE`: a recorded trace (Azure LLM inference CSV,
// BurstGPT CSV, Mooncake JSONL) summarised and written as a workload file
// that replays it (workload/trace_workload.h).
#pragma once

#include <CLI/CLI.hpp>

namespace goodput {

void AddWorkloadCommand(CLI::App& app);

}  // namespace goodput
