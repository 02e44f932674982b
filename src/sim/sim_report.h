// Tables and JSON for `goodput sim`: the source's table (load | total
// throughput | per-request speed | TTFT) with TPOT/TTFT percentiles,
// attainment per class, goodput and the SLO verdict per row.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <boost/json/value.hpp>

#include "sim/load_sweep.h"

namespace goodput {

std::string FormatPointTable(const std::vector<PointResult>& points);
boost::json::value PointToJson(const PointResult& p);

// One line naming the capacity (or why there is none).
std::string FormatCapacity(const std::vector<PointResult>& points, std::optional<size_t> capacity, bool capped);

}  // namespace goodput
