// The slo policy's step-time predictor, one for goodput serve and the
// simulator: the cost model (hw/cost_model.h, the form the simulator times
// its steps with) as the prior, scaled by what steps actually take here and
// now. On the CPU engine the prior is fitted to steps measured at start-up
// (cpu/step_fit.h), and a neighbour taking a core doubles every step, which a
// fit made once would not know; in the simulator the steps take what the
// model says, and the scale stays 1 unless the steps hold work the
// prediction leaves out (a drafter's passes).
#pragma once

#include <cstdint>

#include "engine/scheduler.h"
#include "engine/step.h"
#include "hw/cost_model.h"

namespace goodput {

// The scale follows the log of actual / predicted, averaged over about the
// last ten steps, plus its mean deviation: a step is predicted near the
// upper side of what recent steps took, not their middle. One stalled step
// moves it little (each ratio is clipped to 1/8 .. 8).
class AdaptiveStepTimePredictor final : public StepTimePredictor {
 public:
  // `prior` must outlive the predictor.
  explicit AdaptiveStepTimePredictor(const CostModel* prior) : prior_(prior) {}

  void Begin() override { pending_ = {}; }
  void Add(int64_t num_computed, int64_t num_new, bool samples) override;
  double SecondsWith(int64_t num_computed, int64_t num_new, bool samples) const override;

  // A step of `plan` took `seconds` (called between steps, on the thread that schedules).
  void Observe(const StepPlan& plan, double seconds);
  // What the prior's predictions are multiplied by now (1 before any step was observed).
  double scale() const { return scale_; }

 private:
  const CostModel* prior_;
  CostModel::Step pending_;
  double log_ratio_ = 0, log_deviation_ = 0, scale_ = 1;
};

}  // namespace goodput
