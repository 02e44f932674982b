#include "sim/replica.h"

#include "sim/simulator.h"

namespace goodput {

Replica::Replica(const SimOptions& o, const CostModel& cost, uint64_t stream)
    : kv_(o.kv_groups, o.num_blocks, o.prefix_caching),
      runner_(&cost, o.acceptance_rate, o.seed * 7919 + 17 + stream * 0x9e3779b97f4a7c15ull),
      predictor_(&cost),
      sched_(o.scheduler, &kv_, o.scheduler.policy == SchedulingPolicy::kSlo ? &predictor_ : nullptr),
      core_(&sched_, &runner_, &clock_) {
  if (o.scheduler.policy != SchedulingPolicy::kSlo) {
    if (o.step_observer) core_.set_observer(o.step_observer);
    return;
  }
  // The slo policy's predictor learns from every step, as goodput serve's does.
  core_.set_observer([this, also = o.step_observer](const ObservedStep& step) {
    predictor_.Observe(step.plan, step.end - step.start);
    if (also) also(step);
  });
}

std::optional<RequestEvent> Replica::Submit(Request r) {
  if (!sched_.HasWork()) clock_.AdvanceTo(r.arrival_time);
  return sched_.Add(std::move(r));
}

}  // namespace goodput
