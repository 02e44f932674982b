// EngineCore: the step loop of three calls, schedule -> execute -> update,
// against a Clock and a ModelRunner. The server and the simulator both drive
// it; neither reads the time anywhere else.
#pragma once

#include <functional>
#include <vector>

#include "core/clock.h"
#include "engine/scheduler.h"
#include "engine/step.h"

namespace goodput {

struct StepStats {
  double start = 0;
  double end = 0;
  int64_t num_batched_tokens = 0;
  size_t num_requests = 0;
  size_t num_preempted = 0;
};

class EngineCore {
 public:
  EngineCore(Scheduler* scheduler, ModelRunner* runner, Clock* clock)
      : scheduler_(scheduler), runner_(runner), clock_(clock) {}

  // Runs one step. Returns the requests' events (tokens, finishes); an empty
  // plan (nothing schedulable now) runs nothing and returns no events.
  std::vector<RequestEvent> Step(StepStats* stats = nullptr);

  bool HasWork() const { return scheduler_->HasWork(); }
  void set_observer(StepObserver observer) { observer_ = std::move(observer); }

 private:
  Scheduler* scheduler_;
  ModelRunner* runner_;
  Clock* clock_;
  StepObserver observer_;
};

}  // namespace goodput
