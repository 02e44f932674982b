// EngineService: the EngineCore with the real clock, in a thread of its own.
// Other threads submit and abort requests through a queue; each request's
// outputs go to its callback, called on the engine thread, which should only
// hand them over (the HTTP server posts them to the connection's executor).
// Nothing outside the engine thread touches the scheduler or the KV cache.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <vector>

#include "core/clock.h"
#include "engine/engine_core.h"

namespace goodput {

struct RequestOutput {
  RequestId id = 0;
  std::vector<int32_t> new_token_ids;
  int32_t num_new_tokens = 0;
  bool finished = false;
  FinishReason reason = FinishReason::kNone;
  double time = 0;  // engine clock, when the step that produced it ended
  std::vector<TokenLogprob> new_logprobs;  // one per new token, when the request asked
};
using OutputCallback = std::function<void(const RequestOutput&)>;

// A consistent snapshot for /metrics and /health.
struct EngineStats {
  int64_t running = 0, waiting = 0;
  double kv_usage = 0;  // [0, 1]
  int64_t free_blocks = 0, num_blocks = 0;
  int64_t prompt_tokens_total = 0, generation_tokens_total = 0;
  int64_t preemptions_total = 0, steps_total = 0;
  int64_t prefix_cache_queries_total = 0, prefix_cache_hits_total = 0;  // tokens
  int64_t requests_finished_total = 0, requests_aborted_total = 0, requests_rejected_total = 0;
};

class EngineService {
 public:
  EngineService(Scheduler* scheduler, KvCacheManager* kv, ModelRunner* runner, Clock* clock);
  ~EngineService();  // stops, aborting what is in flight

  // Before Start: `observer` is told of every step, on the engine thread
  // (goodput serve --step-log).
  void set_step_observer(StepObserver observer) { core_.set_observer(std::move(observer)); }
  void Start();
  // Stops taking requests; with `finish_inflight` the engine first runs what
  // it holds to completion, otherwise aborts it. Joins the engine thread.
  void Stop(bool finish_inflight);

  // Thread-safe. Stamps the request's arrival_time: now, on the engine's
  // clock, when it reaches the engine (its order among the waiting, and what
  // the step log records). False (and no callback) once stopping.
  bool Submit(Request request, OutputCallback on_output);
  // Thread-safe; the request's callback gets a final output with kAborted.
  void Abort(RequestId id);

  EngineStats Stats() const;
  double Now() const { return clock_->Now(); }

 private:
  struct Command {
    enum class Kind { kAdd, kAbort } kind;
    Request request;
    OutputCallback on_output;
    RequestId id = 0;
  };
  void Loop();
  void Apply(std::deque<Command>& commands);
  void Deliver(const RequestEvent& e, double now);
  void AbortAll();
  void RefreshStats();

  Scheduler* scheduler_;
  KvCacheManager* kv_;
  Clock* clock_;
  EngineCore core_;
  std::unordered_map<RequestId, OutputCallback> callbacks_;  // engine thread only

  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Command> commands_;
  bool accepting_ = false, stopping_ = false, finish_inflight_ = true;
  EngineStats stats_;
  std::thread thread_;
};

}  // namespace goodput
