// The value contract between the Scheduler and a ModelRunner: what to
// compute this step (StepPlan) and what came out (StepResult).
#pragma once

#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include "engine/kv_cache_manager.h"
#include "engine/request.h"

namespace goodput {

struct ScheduledRequest {
  RequestId id = 0;
  int64_t num_computed = 0;   // tokens already in the KV cache
  int32_t num_new = 0;        // tokens to compute now, draft tokens included
  int32_t num_draft = 0;      // speculative tokens among num_new
  bool samples = false;       // the step reaches the sequence's end: sample
  bool restarted = false;     // first step since admission or preemption: runner state starts afresh
  int request_class = 0;
  bool offline = false;
  double arrival_time = 0;    // when the request reached the engine, on its clock
  const BlockTable* blocks = nullptr;  // where its KV lives; valid until the next schedule
  std::vector<int32_t> token_ids;      // ids of the num_new tokens (empty when simulated)
  SamplingParams sampling;             // copied when restarted, else left default
};

struct StepPlan {
  std::vector<ScheduledRequest> requests;
  int64_t num_batched_tokens = 0;
  std::vector<RequestId> preempted;  // lost their KV this step
  std::vector<RequestId> released;   // finished or aborted since the last step: runner may drop state
  bool empty() const { return requests.empty(); }
};

// A sampled token's log-probability under the model (the log-softmax of its
// logits, before temperature and top-k/top-p, as vLLM's raw logprobs), and
// the most likely tokens with theirs, most likely first.
struct TokenLogprob {
  float logprob = 0;
  std::vector<std::pair<int32_t, float>> top;
};

// What happened to one request in a step.
struct RequestEvent {
  RequestId id = 0;
  int32_t num_new_tokens = 0;
  std::vector<int32_t> new_token_ids;
  bool finished = false;
  FinishReason reason = FinishReason::kNone;
  std::vector<TokenLogprob> new_logprobs;  // one per new token, when asked
};

// A step that ran: its plan, when it started and ended on the clock (the
// span covers scheduling and execution), and what happened to its requests.
struct ObservedStep {
  const StepPlan& plan;
  double start;
  double end;
  const std::vector<RequestEvent>& events;
};

// Told of every step that ran, on the stepping thread.
using StepObserver = std::function<void(const ObservedStep& step)>;

struct SampledTokens {
  RequestId id = 0;
  int32_t num_tokens = 1;             // accepted drafts + 1
  std::vector<int32_t> token_ids;     // the tokens (empty when simulated)
  std::vector<TokenLogprob> logprobs;  // one per token when the request asked (SamplingParams::logprobs)
};

struct StepResult {
  std::vector<SampledTokens> sampled;  // one per request with samples == true
  double modeled_seconds = 0;          // step time when the runner models time (0 for real work)
};

// A ModelRunner executes one step.
class ModelRunner {
 public:
  virtual ~ModelRunner() = default;
  virtual StepResult Execute(const StepPlan& plan) = 0;
};

}  // namespace goodput
