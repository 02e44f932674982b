// How a Plan is shown: a table for people, a stable JSON document for
// programs, and a side-by-side comparison of two plans.
#pragma once

#include <string>

#include <boost/json/value.hpp>

#include "plan/planner.h"

namespace goodput {

// The full human-readable plan.
std::string FormatPlanTable(const Plan& plan);

// The same content as JSON (sizes in bytes, lengths in tokens).
boost::json::value PlanToJson(const Plan& plan);

// Two plans side by side: the rows that matter for choosing between them.
std::string FormatPlanComparison(const Plan& base, const Plan& variant, const std::string& change);

}  // namespace goodput
