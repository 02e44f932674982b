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

Result<PointResult> MeasurePoint(Target& target, const Workload& workload, const ArrivalSpec& load, int repeats,
                                 const RepetitionProgress& progress = {});

}  // namespace goodput
