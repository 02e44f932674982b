// A request as the engine holds it. Only the Scheduler writes it; the KV
// manager and the model runner see values copied into the StepPlan.
#pragma once

#include <cstdint>
#include <vector>

namespace goodput {

using RequestId = int64_t;

struct SamplingParams {
  double temperature = 0;  // 0: greedy
  double top_p = 1;
  int top_k = 0;           // 0: off
  uint64_t seed = 0;
  int64_t max_tokens = 16;
  int64_t min_tokens = 0;
  bool ignore_eos = false;
  std::vector<int32_t> stop_token_ids;  // besides the model's EOS
  // -1: no log-probabilities; 0..kMaxLogprobs: each sampled token's, with
  // this many of the most likely tokens beside it (OpenAI's logprobs).
  int logprobs = -1;
};
constexpr int kMaxLogprobs = 20;  // vLLM's default --max-logprobs

enum class RequestStatus { kWaiting, kRunning, kFinished };
enum class FinishReason { kNone, kLength, kStop, kMaxModelLen, kAborted, kRejected };
const char* FinishReasonName(FinishReason r);

struct Request {
  RequestId id = 0;
  int request_class = 0;
  bool offline = false;
  int priority = 0;           // lower runs first
  double arrival_time = 0;
  int64_t num_prompt_tokens = 0;
  std::vector<int32_t> token_ids;  // prompt then outputs; empty when simulated
  SamplingParams sampling;
  // Prompt tokens whose KV another instance computed (a disaggregated prefill,
  // vLLM's KV connector): admitted with blocks for them and nothing to
  // compute but the last prompt token, whose logits the first output needs.
  // A preemption loses them: the request is then computed here.
  int64_t num_external_computed_tokens = 0;
  // A disaggregated prefill: when it finishes its blocks stay taken until
  // Scheduler::ReleaseKv (the decode side has read them), as vLLM's KV
  // connectors delay freeing them.
  bool hold_kv_after_finish = false;

  // Engine state.
  RequestStatus status = RequestStatus::kWaiting;
  int64_t num_output_tokens = 0;
  int64_t num_computed_tokens = 0;  // tokens whose KV is in the cache
  int64_t admitted_seq = 0;         // order of (re)admission, for newest-first preemption
  int num_preemptions = 0;
  FinishReason finish_reason = FinishReason::kNone;

  int64_t num_tokens() const { return num_prompt_tokens + num_output_tokens; }
};

}  // namespace goodput
