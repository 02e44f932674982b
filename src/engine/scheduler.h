// The scheduler, with vLLM V1's semantics: no prefill/decode phases; each
// running request's computed tokens catch up with its known tokens under one
// token budget per step and a cap on running sequences; long prompts are
// chunked; when KV blocks run out, a running request is preempted and later
// recomputed.
//
// Policies:
//   fcfs      arrival order across all classes (vLLM's default).
//   priority  classes first (running interactive, running offline, waiting
//             interactive, waiting offline), then `priority` (lower first),
//             then arrival.
//   slo       as priority, and while interactive requests are decoding,
//             offline tokens enter a step only while the StepTimePredictor
//             says the step keeps the interactive TPOT target; interactive
//             prefills are chunked to fit it too (never below 256 tokens).
// Preemption victims: under fcfs the newest admitted; otherwise offline
// before interactive, then the lowest priority, then the newest.
// SchedulerConfig::prefill_first puts prompts before decodes (vLLM V0 with
// chunked_prefill off, SGLang with it on).
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <memory>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/status.h"
#include "engine/engine_config.h"
#include "engine/kv_cache_manager.h"
#include "engine/request.h"
#include "engine/step.h"

namespace goodput {

// Predicts a step's duration as requests are added to it (the cost model).
class StepTimePredictor {
 public:
  virtual ~StepTimePredictor() = default;
  // Starts an empty step.
  virtual void Begin() = 0;
  // Adds a request's work to the step.
  virtual void Add(int64_t num_computed, int64_t num_new, bool samples) = 0;
  // The step's predicted duration if this work were added too (nothing is added).
  virtual double SecondsWith(int64_t num_computed, int64_t num_new, bool samples) const = 0;
};

class Scheduler {
 public:
  // `config` has its sizes resolved (ResolveEngineDefaults). `predictor` is
  // needed by the slo policy only (may be null otherwise).
  Scheduler(SchedulerConfig config, KvCacheManager* kv, StepTimePredictor* predictor);

  // Queues a request. A request that can never run (longer than the max
  // model length, or needing more blocks than the pool has) is rejected: the
  // returned event says so and the request is not kept.
  std::optional<RequestEvent> Add(Request request);

  // Aborts a waiting or running request and frees its blocks; false if unknown.
  bool Abort(RequestId id);

  // Frees the blocks a finished request with hold_kv_after_finish kept (its
  // KV transfer is done); an id holding none is ignored.
  void ReleaseKv(RequestId id);

  // Plans the next step. The plan's block tables stay valid until the next call.
  const StepPlan& Schedule();

  // Applies a step's sampled tokens: appends them, finishes requests, frees
  // their blocks. Returns one event per request that produced tokens or ended.
  std::vector<RequestEvent> Update(const StepPlan& plan, const StepResult& result);

  bool HasWork() const { return !waiting_.empty() || !running_.empty() || !inbox_.empty(); }
  // Waiting requests, those not yet taken in (SchedulerConfig::recv_interval) among them.
  size_t num_waiting() const { return waiting_.size() + inbox_.size(); }
  size_t num_running() const { return running_.size(); }
  int64_t num_preemptions() const { return preemptions_; }
  // Prefix caching: prompt (and output) tokens of admitted requests, and how
  // many of them were found in the cache (vLLM's prefix cache queries/hits).
  int64_t prefix_queried_tokens() const { return prefix_queried_tokens_; }
  int64_t prefix_hit_tokens() const { return prefix_hit_tokens_; }
  const Request* Find(RequestId id) const;
  const SchedulerConfig& config() const { return config_; }

 private:
  bool ClassAware() const { return config_.policy != SchedulingPolicy::kFcfs; }
  bool WholePromptsOnly() const { return !config_.chunked_prefill; }
  bool WaitingBefore(const Request& a, const Request& b) const;
  bool RunningBefore(const Request& a, const Request& b) const;
  int32_t TokensToCompute(const Request& r, int64_t budget) const;
  int32_t TokensThatFit(const Request& r, int32_t num_new) const;
  // Which running requests a pass over them takes: all, or (prompts before
  // decodes) those still computing their prompt, or those decoding.
  enum class RunningPass { kAll, kPrompts, kDecodes };
  void ScheduleRunning(int64_t& budget, RunningPass pass = RunningPass::kAll);
  void ScheduleWaiting(int64_t& budget);
  // The most tokens `r` can hold: its prompt and max_tokens, within the max model length.
  int64_t LongestLength(const Request& r) const;
  // Blocks `r` still needs to reach its max_tokens (guaranteed_no_evict).
  int64_t BlocksToComplete(const Request& r) const;
  // guaranteed_no_evict: free blocks beyond what the running requests still need.
  int64_t SpareBlocks() const;
  void Preempt(int64_t& budget);
  void InsertWaiting(Request* r);
  void InsertRunning(Request* r);
  // Takes the requests that arrived into the waiting queue when the receive
  // interval allows (SchedulerConfig::recv_interval); counts the step planned.
  void Receive();
  void CountStep();
  // One scheduler pass (what Schedule does outside a multi-step run).
  void SchedulePass(int64_t& budget);
  // Whether the plan so far computes any prompt tokens (else it is decodes alone).
  bool PlanComputesAPrompt() const;
  void Emit(Request& r, int32_t num_new, int32_t num_draft, const BlockTable* table, bool admitted);
  bool CheckFinished(Request& r, int32_t last_token) const;
  void Finish(Request& r);

  SchedulerConfig config_;
  KvCacheManager* kv_;
  StepTimePredictor* predictor_;
  std::unordered_map<RequestId, Request> requests_;  // nodes are stable: the queues hold pointers
  std::deque<Request*> waiting_;   // in scheduling order
  std::vector<Request*> inbox_;    // arrived, not yet taken in (recv_interval > 1), in arrival order
  std::vector<Request*> running_;  // in scheduling order; the back is the next preemption victim
  int64_t interactive_running_ = 0;
  int64_t offline_running_ = 0;
  StepPlan plan_;
  std::vector<RequestId> released_;
  int steps_left_in_run_ = 0;  // multi-step scheduling: steps of the current run after this one
  int recv_count_ = 0;         // steps counted toward the next receive (set to the interval at start)
  int64_t admitted_counter_ = 0;
  int64_t preemptions_ = 0;
  int64_t prefix_queried_tokens_ = 0, prefix_hit_tokens_ = 0;
};

}  // namespace goodput
