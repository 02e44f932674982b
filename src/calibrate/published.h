// Published measurements of a deployment one cannot run here (a vendor's
// page, an engine's benchmark, a colleague's log): which workload ran at
// which load, and the TTFT p50, TPOT p50 and throughput it got. Read from a
// YAML file, then fitted like a ledger run (ledger_fit.h):
//
//   source: gpustack performance lab, deepseek-r1/h200.md (vLLM 0.11.0)
//   points:
//     - workload: random-4000-200-burst.yaml   # beside this file, else data/workloads/
//       ttft_p50_s: 61.95                       # seconds; give any of the three figures
//       tpot_p50_s: 0.17737
//     - workload: sharegpt-means.yaml
//       concurrency: 4                          # or rate: R (requests/s); neither: the workload's arrival
//       tpot_p50_s: 0.01913
//       throughput_tokens_per_s: 196.81         # output tokens / s
#pragma once

#include <string>
#include <vector>

#include "calibrate/ledger_fit.h"
#include "core/status.h"

namespace goodput {

struct PublishedFigures {
  std::string source;               // where the figures come from, for people
  std::vector<MeasuredLoad> loads;  // one per point, in file order
};

// Parses `text` (from `where`, whose directory `base_dir` workload paths are
// tried against first). Errors name the file, line and key: not YAML, no
// points, a point without a workload or without any figure, a figure that is
// not a positive number, both a concurrency and a rate, an unknown key.
Result<PublishedFigures> ParsePublishedFigures(const std::string& text, const std::string& where,
                                               const std::string& base_dir);
Result<PublishedFigures> LoadPublishedFigures(const std::string& path);

}  // namespace goodput
