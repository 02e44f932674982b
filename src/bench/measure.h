// One load point against a Target: the workload run `repeats` times
// (repetitions 1..repeats), summarised by medians against the workload's
// SLOs, with the measurement's own health beside it.
#pragma once

#include <functional>
#include <string>

#include "bench/target.h"
#include "sim/load_sweep.h"

namespace goodput {

// Reports "repetition i of n" before each run; may be empty.
using RepetitionProgress = std::function<void(int, int)>;

// `runs`, when given, receives every repetition's run (for the ledger).
// `stop`, when given and true between repetitions, ends the point with an
// "interrupted" error.
Result<PointResult> MeasurePoint(Target& target, const Workload& workload, const ArrivalSpec& load, int repeats,
                                 const RepetitionProgress& progress = {}, std::vector<SimRun>* runs = nullptr,
                                 const std::function<bool()>& stop = {});

}  // namespace goodput
