// The model as a plan deploys it, in the terms the cost model needs.
#pragma once

#include "hw/cost_model.h"
#include "plan/planner.h"

namespace goodput {

// Weights per GPU (experts apart), cache bytes per token and per sequence by
// layer kind, from the plan's own accounting.
DeployedModel DeployedModelFromPlan(const Plan& plan);

}  // namespace goodput
