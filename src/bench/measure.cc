#include "bench/measure.h"

namespace goodput {

Result<PointResult> MeasurePoint(Target& target, const Workload& workload, const ArrivalSpec& load, int repeats,
                                 const RepetitionProgress& progress, std::vector<SimRun>* runs_out,
                                 const std::function<bool()>& stop) {
  if (repeats < 1) return Status::InvalidArgument("repeats must be at least 1");
  std::vector<SimRun> runs;
  for (int i = 1; i <= repeats; ++i) {
    if (stop && stop()) return Status::FailedPrecondition("interrupted");
    if (progress) progress(i, repeats);
    GOODPUT_ASSIGN_OR_RETURN(SimRun run, target.Run(workload, load, i));
    runs.push_back(std::move(run));
  }
  if (stop && stop()) return Status::FailedPrecondition("interrupted");  // the last run was cut short
  PointResult point = Summarise(workload, load, runs);
  if (runs_out) *runs_out = std::move(runs);
  return point;
}

}  // namespace goodput
