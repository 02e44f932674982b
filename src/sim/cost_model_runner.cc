#include "sim/cost_model_runner.h"

namespace goodput {
namespace {

constexpr int32_t kSimulatedTokenId = 100;  // any id: a simulated output's value is never read

}  // namespace

CostModelRunner::CostModelRunner(const CostModel* model, double acceptance, uint64_t seed)
    : model_(model), acceptance_(acceptance), rng_(seed) {}

int32_t CostModelRunner::AcceptedDrafts(int32_t drafts) {
  if (drafts == 0) return 0;
  std::bernoulli_distribution accept(acceptance_);
  int32_t a = 0;
  while (a < drafts && accept(rng_)) ++a;
  return a;
}

StepResult CostModelRunner::Execute(const StepPlan& plan) {
  StepResult result;
  result.sampled.reserve(plan.requests.size());
  CostModel::Step step;
  for (const ScheduledRequest& s : plan.requests) {
    model_->Add(step, s.num_computed, s.num_new, s.samples, s.num_draft);
    if (!s.samples) continue;
    const int32_t tokens = AcceptedDrafts(s.num_draft) + 1;
    // A request given token ids (a shared prompt prefix) gets ids for its
    // outputs too, so that its ids keep pace with its computed tokens.
    std::vector<int32_t> ids;
    if (!s.token_ids.empty()) ids.assign(static_cast<size_t>(tokens), kSimulatedTokenId);
    result.sampled.push_back({s.id, tokens, std::move(ids), {}});
    if (s.num_draft > 0) {
      ++draft_steps_;
      draft_step_tokens_ += tokens;
      drafted_tokens_ += s.num_draft;
    }
  }
  result.modeled_seconds = model_->Seconds(step);
  return result;
}

}  // namespace goodput
