#include "engine/engine_core.h"

namespace goodput {

std::vector<RequestEvent> EngineCore::Step(StepStats* stats) {
  const double start = clock_->Now();
  const StepPlan& plan = scheduler_->Schedule();
  if (stats) *stats = StepStats{start, start, plan.num_batched_tokens, plan.requests.size(), plan.preempted.size()};
  if (plan.empty()) return {};
  StepResult result = runner_->Execute(plan);
  clock_->Elapse(result.modeled_seconds);
  const double end = clock_->Now();
  if (stats) stats->end = end;
  std::vector<RequestEvent> events = scheduler_->Update(plan, result);
  if (observer_) observer_(ObservedStep{plan, start, end, events});
  return events;
}

}  // namespace goodput
