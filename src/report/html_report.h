// `goodput report`: one self-contained HTML file for a ledger run — the
// figures as a table and charts (throughput vs load; TTFT and TPOT
// percentiles vs load with the SLO thresholds drawn; attainment and goodput
// vs load with the capacity marked; one line per setting of a --vary run).
#pragma once

#include <string>
#include <vector>

#include "ledger/ledger.h"

namespace goodput::report {

std::string HtmlReport(const StoredRun& run, const std::vector<StoredPoint>& points);

// Writes the report of `run` from `ledger` to `path` (through a temporary
// file, so a failed write never leaves a half-written report behind).
Status WriteHtmlReport(Ledger& ledger, int64_t run, const std::string& path);

}  // namespace goodput::report
