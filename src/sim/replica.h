// One simulated engine instance: its own scheduler, KV cache, cost-model
// runner and clock. A fleet is several of them on one timeline: the
// simulator steps whichever is ready first and routes arrivals among them.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "core/clock.h"
#include "engine/engine_core.h"
#include "engine/kv_cache_manager.h"
#include "engine/scheduler.h"
#include "engine/step_time_predictor.h"
#include "hw/cost_model.h"
#include "sim/cost_model_runner.h"

namespace goodput {

struct SimOptions;

class Replica {
 public:
  // `stream` separates the replicas' random draws (drafts accepted).
  Replica(const SimOptions& options, const CostModel& cost, uint64_t stream);
  Replica(const Replica&) = delete;
  Replica& operator=(const Replica&) = delete;

  // Queues `r` (arrived at r.arrival_time); an idle replica's clock moves up
  // to it. The rejection's event when the engine refuses it.
  std::optional<RequestEvent> Submit(Request r);
  // One step at the replica's time; its clock moves to the step's end.
  std::vector<RequestEvent> Step(StepStats* stats) { return core_.Step(stats); }
  // Moves the clock on (the engine loop's time between steps).
  void Elapse(double seconds) { clock_.Elapse(seconds); }
  void AdvanceTo(double t) { clock_.AdvanceTo(t); }
  // The blocks finished request `id` held for its KV transfer go back to the pool.
  void ReleaseKv(RequestId id) { sched_.ReleaseKv(id); }

  bool HasWork() const { return sched_.HasWork(); }
  double Now() const { return clock_.Now(); }
  double KvUsage() const { return kv_.Usage(); }
  bool prefix_caching() const { return kv_.prefix_caching(); }
  const Scheduler& scheduler() const { return sched_; }
  const CostModelRunner& runner() const { return runner_; }

 private:
  VirtualClock clock_;
  KvCacheManager kv_;
  CostModelRunner runner_;
  AdaptiveStepTimePredictor predictor_;  // the slo policy's, over the same cost model
  Scheduler sched_;
  EngineCore core_;
};

}  // namespace goodput
