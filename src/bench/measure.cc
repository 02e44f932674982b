#include "bench/measure.h"

namespace goodput {

Result<PointResult> MeasurePoint(Target& target, const Workload& workload, const ArrivalSpec& load, int repeats,
                                 const RepetitionProgress& progress) {
  if (repeats < 1) return Status::InvalidArgument("repeats must be at least 1");
  std::vector<SimRun> runs;
  for (int i = 1; i <= repeats; ++i) {
    if (progress) progress(i, repeats);
    GOODPUT_ASSIGN_OR_RETURN(SimRun run, target.Run(workload, load, i));
    runs.push_back(std::move(run));
  }
  return Summarise(workload, load, runs);
}

}  // namespace goodput
