// The engine's flags (vLLM's names), defined once and registered by every
// command that plans or runs an engine: plan (sizes and cache), sim (all),
// serve (sizes, cache and scheduling). Their values become the one
// EngineConfig (engine/engine_config.h); defaults left unset are resolved
// there, per device.
#pragma once

#include <string>

#include <CLI/CLI.hpp>

#include "core/status.h"
#include "engine/engine_config.h"

namespace goodput {

// Sizes stay strings where our parsers can say what is wrong ("32k", "1GiB").
struct EngineArgs {
  int64_t max_num_seqs = 0, max_num_batched_tokens = 0, block_size = 0;
  std::string max_model_len, kv_cache_dtype = "auto", kv_cache_memory;
  std::string policy = "fcfs";
  int64_t long_prefill_token_threshold = 0, max_offline_seqs = 0;
  int num_speculative_tokens = 0;
  bool enable_prefix_caching = true;
  bool prefill_first = false;
  int num_scheduler_steps = 1;
  int scheduler_recv_interval = 1;
};

// Which of the flags a command takes.
enum EngineFlagSet : unsigned {
  kEngineSizeFlags = 1,         // --max-num-seqs, --max-num-batched-tokens, --max-model-len, --block-size,
                                // --kv-cache-dtype, --kv-cache-memory
  kEngineSchedulingFlags = 2,   // --scheduling-policy, --long-prefill-token-threshold, --max-offline-seqs,
                                // --[no-]enable-prefix-caching, --prefill-first
  kEngineSpeculativeFlags = 4,  // --num-speculative-tokens
};

void AddEngineFlags(CLI::App& app, EngineArgs& a, unsigned which);

// The config the flags describe (unset sizes stay 0). Errors name the flag.
Result<EngineConfig> ToEngineConfig(const EngineArgs& a);

}  // namespace goodput
