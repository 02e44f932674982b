#include "engine/step_time_predictor.h"

#include <algorithm>
#include <cmath>

namespace goodput {

void AdaptiveStepTimePredictor::Add(int64_t num_computed, int64_t num_new, bool samples) {
  prior_->Add(pending_, num_computed, num_new, samples);
}

double AdaptiveStepTimePredictor::SecondsWith(int64_t num_computed, int64_t num_new, bool samples) const {
  CostModel::Step step = pending_;
  prior_->Add(step, num_computed, num_new, samples);
  return scale_ * prior_->Seconds(step);
}

void AdaptiveStepTimePredictor::Observe(const StepPlan& plan, double seconds) {
  constexpr double kWeight = 0.1;             // of the newest step: about ten steps remembered
  constexpr double kMaxLogRatio = 2.0794415;  // log(8)
  if (plan.requests.empty() || !(seconds > 0)) return;
  CostModel::Step step;
  for (const ScheduledRequest& r : plan.requests) prior_->Add(step, r.num_computed, r.num_new, r.samples);
  const double predicted = prior_->Seconds(step);
  if (!(predicted > 0)) return;
  const double x = std::clamp(std::log(seconds / predicted), -kMaxLogRatio, kMaxLogRatio);
  log_deviation_ += kWeight * (std::abs(x - log_ratio_) - log_deviation_);
  log_ratio_ += kWeight * (x - log_ratio_);
  scale_ = std::exp(log_ratio_ + log_deviation_);
}

}  // namespace goodput
