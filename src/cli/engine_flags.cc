#include "cli/engine_flags.h"

#include "core/units.h"

namespace goodput {

void AddEngineFlags(CLI::App& c, EngineArgs& a, unsigned which) {
  if (which & kEngineSizeFlags) {
    c.add_option("--max-num-seqs", a.max_num_seqs,
                 "Sequence cap (default: vLLM's for the device: 1024 on GPUs with >= 70 GiB except A100, 256 on "
                 "other GPUs, 128 on the CPU)");
    c.add_option("--max-num-batched-tokens", a.max_num_batched_tokens,
                 "Token budget per step (default: vLLM's: 8192 on GPUs with >= 70 GiB except A100, else 2048)");
    c.add_option("--max-model-len", a.max_model_len, "Max tokens per request, e.g. 32k (default: the model's)");
    c.add_option("--block-size", a.block_size, "Tokens per KV block (default: 16; 64 for MLA; raised for hybrids)");
    c.add_option("--kv-cache-dtype", a.kv_cache_dtype,
                 "KV cache type: auto (the model's dtype), fp32, bf16, fp16, fp8 (e4m3), fp8_e5m2; int8 on the CPU "
                 "engine")
        ->capture_default_str();
    c.add_option("--kv-cache-memory", a.kv_cache_memory,
                 "KV pool size, as vLLM's --kv-cache-memory, e.g. 1GiB (default: GPUs from "
                 "--gpu-memory-utilization, the CPU engine 1GiB)");
  }
  if (which & kEngineSchedulingFlags) {
    c.add_option("--scheduling-policy", a.policy, "fcfs | priority | slo")->capture_default_str();
    c.add_option("--long-prefill-token-threshold", a.long_prefill_token_threshold,
                 "Max prefill chunk per request (0: the step's budget)");
    c.add_option("--max-offline-seqs", a.max_offline_seqs, "Cap on running offline requests (0: none)");
    c.add_flag("--enable-prefix-caching,!--no-enable-prefix-caching", a.enable_prefix_caching,
               "Share the KV of a prompt prefix already computed (vLLM's automatic prefix caching; on by default, "
               "for full-attention and sliding-window layers; off for models with recurrent state)");
    c.add_flag("--prefill-first", a.prefill_first,
               "vLLM V0's scheduling with chunked prefill off, as the engines early serving papers compare against: "
               "a step that admits requests computes only their whole prompts and no decodes (token budget by "
               "default max(--max-model-len, 2048))");
    c.add_option("--num-scheduler-steps", a.num_scheduler_steps,
                 "vLLM V0's multi-step scheduling: a step of decodes alone runs this many steps over the same "
                 "requests before the scheduler admits any other")
        ->capture_default_str();
    c.add_option("--scheduler-recv-interval", a.scheduler_recv_interval,
                 "SGLang's: while requests decode, take newly arrived requests in only every this many decode steps "
                 "(a step with a prompt, or an idle engine, lets them in at the next; 1: every step)")
        ->capture_default_str();
  }
  if (which & kEngineSpeculativeFlags) {
    c.add_option("--num-speculative-tokens", a.num_speculative_tokens, "Draft tokens per step (speculative decoding)");
  }
}

Result<EngineConfig> ToEngineConfig(const EngineArgs& a) {
  EngineConfig c;
  SchedulerConfig& s = c.scheduler;
  s.max_num_seqs = a.max_num_seqs;
  s.max_num_batched_tokens = a.max_num_batched_tokens;
  if (!a.max_model_len.empty()) {
    auto len = ParseTokenCount(a.max_model_len);
    if (!len.ok()) return len.status().WithContext("--max-model-len");
    s.max_model_len = *len;
  }
  GOODPUT_ASSIGN_OR_RETURN(s.policy, ParseSchedulingPolicy(a.policy));
  s.long_prefill_token_threshold = a.long_prefill_token_threshold;
  s.max_offline_seqs = a.max_offline_seqs;
  s.prefill_first = a.prefill_first;
  if (a.prefill_first) s.chunked_prefill = false;  // vLLM V0's: whole prompts
  s.num_scheduler_steps = a.num_scheduler_steps;
  s.recv_interval = a.scheduler_recv_interval;
  s.num_speculative_tokens = a.num_speculative_tokens;
  c.cache.block_size = a.block_size;
  c.cache.enable_prefix_caching = a.enable_prefix_caching;
  c.cache.kv_cache_dtype = a.kv_cache_dtype;
  if (!a.kv_cache_memory.empty()) {
    auto pool = ParseBytes(a.kv_cache_memory);
    if (!pool.ok()) return pool.status().WithContext("--kv-cache-memory");
    c.cache.kv_cache_memory = *pool;
  }
  GOODPUT_RETURN_IF_ERROR(ValidateEngineConfig(c));
  return c;
}

}  // namespace goodput
