// goodput sim --explain-step: one step of a batch priced part by part.
#pragma once

#include <string>

#include "cli/sim_command.h"
#include "core/status.h"

namespace goodput {

// Prints the explanation of `batch` (ParseStepBatch's form) on `deployment`
// as a table, or as JSON with `json`. Errors: a bad batch or deployment.
Status ExplainStepCommand(const std::string& batch, const Result<SimDeployment>& deployment, bool json);

}  // namespace goodput
