// The simulator's ModelRunner: time from the cost model, tokens from the
// workload's lengths (the scheduler stops each request at its output length).
// It is also the slo policy's step-time predictor.
#pragma once

#include <random>

#include "engine/scheduler.h"
#include "engine/step.h"
#include "hw/cost_model.h"

namespace goodput {

class CostModelRunner final : public ModelRunner, public StepTimePredictor {
 public:
  // Speculative decoding: each of a step's drafts is accepted with
  // probability `acceptance`, in order, until the first rejection.
  CostModelRunner(const CostModel* model, double acceptance, uint64_t seed);

  StepResult Execute(const StepPlan& plan) override;

  void Begin() override { pending_ = {}; }
  void Add(int64_t num_computed, int64_t num_new, bool samples) override;
  double SecondsWith(int64_t num_computed, int64_t num_new, bool samples) const override;

  int64_t draft_steps() const { return draft_steps_; }
  int64_t draft_step_tokens() const { return draft_step_tokens_; }
  int64_t drafted_tokens() const { return drafted_tokens_; }

 private:
  int32_t AcceptedDrafts(int32_t drafts);

  const CostModel* model_;
  double acceptance_;
  std::mt19937_64 rng_;
  CostModel::Step pending_;
  int64_t draft_steps_ = 0;
  int64_t draft_step_tokens_ = 0;
  int64_t drafted_tokens_ = 0;
};

}  // namespace goodput
