// The engine's settings, named as vLLM names them: the scheduler's and the KV
// cache's. Every command that runs or plans an engine (plan, sim, serve)
// embeds this one EngineConfig, and its flags are registered once
// (cli/engine_flags.h). Each field has one default, vLLM's: a size left at 0
// takes vLLM's value for the device the engine runs on, filled by
// ResolveEngineDefaults and nowhere else.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "core/status.h"

namespace goodput {

enum class SchedulingPolicy { kFcfs, kPriority, kSlo };
const char* SchedulingPolicyName(SchedulingPolicy p);
Result<SchedulingPolicy> ParseSchedulingPolicy(const std::string& name);  // fcfs | priority | slo

struct SchedulerConfig {
  int64_t max_num_batched_tokens = 0;        // 0: vLLM's default for the device
  int64_t max_num_seqs = 0;                  // 0: vLLM's default for the device
  int64_t max_model_len = 0;                 // 0: the model's max_position_embeddings
  int64_t long_prefill_token_threshold = 0;  // 0: a prefill chunk may take the whole budget
  SchedulingPolicy policy = SchedulingPolicy::kFcfs;
  int64_t max_offline_seqs = 0;              // 0: no cap
  int num_speculative_tokens = 0;            // draft length k
  double slo_step_target = 0;                // slo policy: longest allowed step (seconds); set by the runner's owner
  int32_t eos_token_id = -1;                 // -1: none (simulation)
  // Prompts before decodes: a step that computes prompt tokens computes no
  // decodes, which run only in steps with no prompt to compute. With
  // chunked_prefill off, vLLM V0's default scheduling (as the engines that
  // early serving papers compare against ran: --prefill-first sets both);
  // with it on, SGLang's (a prompt over the budget goes in chunks, its next
  // chunk before any new prompt).
  bool prefill_first = false;
  // vLLM V0's multi-step scheduling (--num-scheduler-steps): a step of
  // decodes alone starts a run of this many steps over the same running
  // requests, no request admitted until the run ends (a request arriving
  // within it waits for its end: the scheduler looks again only then).
  int num_scheduler_steps = 1;
  // TensorRT-LLM's GUARANTEED_NO_EVICT capacity scheduler (its default): a
  // waiting request is admitted only while the pool's free blocks also hold
  // what every running request still needs to reach its max_tokens, so no
  // request is ever preempted. Off: vLLM's, admit while this step's blocks fit
  // and preempt when the pool runs out (TensorRT-LLM's MAX_UTILIZATION).
  bool guaranteed_no_evict = false;
  // Off: a prompt enters a step whole (beside the decodes unless
  // prefill_first) or waits while the step's budget cannot hold it
  // (TensorRT-LLM without chunked context, its default; vLLM V0; a prompt
  // over the budget is refused). vLLM V1 and SGLang chunk.
  bool chunked_prefill = true;
  // SGLang's --scheduler-recv-interval: while requests decode, the scheduler
  // takes in newly arrived requests only once this many decode steps have
  // passed since it last did (a step that computes a prompt, or an idle
  // engine, lets them in at the next); the others wait unseen, so new
  // prompts gather and interrupt the decodes less often. 1: every step, as
  // vLLM and TensorRT-LLM do.
  int recv_interval = 1;
};

struct CacheConfig {
  int64_t block_size = 0;                  // 0: vLLM's, 16 (64 with MLA; the planner raises it for hybrids)
  bool enable_prefix_caching = true;       // vLLM V1's default; in effect unless a layer group holds recurrent state
  std::string kv_cache_dtype = "auto";     // auto: the model's dtype
  std::optional<int64_t> kv_cache_memory;  // the pool (vLLM's --kv-cache-memory); unset: see ResolveEngineDefaults
};

struct EngineConfig {
  SchedulerConfig scheduler;
  CacheConfig cache;
};

// The rows of vLLM's default table (vllm/engine/arg_utils.py,
// get_batch_defaults, API-server context).
enum class EngineDevice {
  kCpu,       // 128 sequences, 2,048 batched tokens (x world size)
  kGpu,       // 256 sequences, 2,048 batched tokens
  kLargeGpu,  // >= 70 GiB and not an A100: 1,024 sequences, 8,192 batched tokens
};
// The row for a GPU of `total_memory` bytes named `name`.
EngineDevice GpuDevice(int64_t total_memory, const std::string& name);

constexpr int64_t kDefaultBlockSize = 16;
constexpr int64_t kDefaultMlaBlockSize = 64;
// The CPU engine's pool when --kv-cache-memory is not given. vLLM's CPU
// backend takes 4 GiB (VLLM_CPU_KVCACHE_SPACE); goodput's presets need far
// less, and several servers share one test machine.
constexpr int64_t kDefaultCpuKvCacheMemory = int64_t{1} << 30;

// Fills every unset size: batched tokens and sequences from `device`'s row,
// max_model_len from `model_max_len`, and on the CPU the KV pool and block
// size (on a GPU the planner sizes the pool from memory and resolves the
// block size with the model's layout).
void ResolveEngineDefaults(EngineConfig& config, EngineDevice device, int64_t model_max_len);

// Errors name the flag: negative sizes, caps or thresholds.
Status ValidateEngineConfig(const EngineConfig& config);

}  // namespace goodput
