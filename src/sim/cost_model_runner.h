// The simulator's ModelRunner: time from the cost model, tokens from the
// workload's lengths (the scheduler stops each request at its output length).
// The slo policy predicts steps with the same cost model
// (engine/step_time_predictor.h), as goodput serve does.
#pragma once

#include <random>

#include "engine/step.h"
#include "hw/cost_model.h"

namespace goodput {

class CostModelRunner final : public ModelRunner {
 public:
  // Speculative decoding: each of a step's drafts is accepted with
  // probability `acceptance`, in order, until the first rejection.
  CostModelRunner(const CostModel* model, double acceptance, uint64_t seed);

  StepResult Execute(const StepPlan& plan) override;

  int64_t draft_steps() const { return draft_steps_; }
  int64_t draft_step_tokens() const { return draft_step_tokens_; }
  int64_t drafted_tokens() const { return drafted_tokens_; }

 private:
  int32_t AcceptedDrafts(int32_t drafts);

  const CostModel* model_;
  double acceptance_;
  std::mt19937_64 rng_;
  int64_t draft_steps_ = 0;
  int64_t draft_step_tokens_ = 0;
  int64_t drafted_tokens_ = 0;
};

}  // namespace goodput
