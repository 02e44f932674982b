// A point summary as JSON and back: what `--json` prints and what the ledger
// stores, so that a stored run can be read again (quotes, reports) with every
// figure it had. Figures that could not be measured are null.
#pragma once

#include <string>

#include <boost/json/value.hpp>

#include "core/status.h"
#include "measure/point.h"

namespace goodput {

boost::json::value PointToJson(const PointResult& p);

// The inverse of PointToJson. Tolerant of fields it does not know and of
// summaries written before a field existed (they keep their defaults); an
// error names what is malformed.
Result<PointResult> PointFromJson(const std::string& text);

}  // namespace goodput
