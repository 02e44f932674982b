#include "engine/engine_config.h"

#include <algorithm>

#include <fmt/format.h>

namespace goodput {

const char* SchedulingPolicyName(SchedulingPolicy p) {
  switch (p) {
    case SchedulingPolicy::kFcfs: return "fcfs";
    case SchedulingPolicy::kPriority: return "priority";
    case SchedulingPolicy::kSlo: return "slo";
  }
  return "?";
}

Result<SchedulingPolicy> ParseSchedulingPolicy(const std::string& name) {
  if (name == "fcfs") return SchedulingPolicy::kFcfs;
  if (name == "priority") return SchedulingPolicy::kPriority;
  if (name == "slo") return SchedulingPolicy::kSlo;
  return Status::InvalidArgument(fmt::format("unknown scheduling policy '{}' (fcfs, priority, slo)", name));
}

EngineDevice GpuDevice(int64_t total_memory, const std::string& name) {
  // vLLM: a larger token budget lowers A100 throughput (vLLM PR 17885), so A100s keep the small row.
  const bool large = total_memory >= 70 * (int64_t{1} << 30) && name.find("a100") == std::string::npos;
  return large ? EngineDevice::kLargeGpu : EngineDevice::kGpu;
}

void ResolveEngineDefaults(EngineConfig& config, EngineDevice device, int64_t model_max_len) {
  SchedulerConfig& s = config.scheduler;
  const bool large = device == EngineDevice::kLargeGpu;
  if (s.max_model_len == 0) s.max_model_len = model_max_len;
  // Without chunked prefill any prompt fits one step (vLLM V0: vllm/config.py, SchedulerConfig).
  if (s.max_num_batched_tokens == 0 && !s.chunked_prefill)
    s.max_num_batched_tokens = std::max<int64_t>(s.max_model_len, 2048);
  if (s.max_num_batched_tokens == 0) s.max_num_batched_tokens = large ? 8192 : 2048;
  if (s.max_num_seqs == 0) s.max_num_seqs = large ? 1024 : device == EngineDevice::kCpu ? 128 : 256;
  if (device == EngineDevice::kCpu) {
    if (config.cache.block_size == 0) config.cache.block_size = kDefaultBlockSize;
    if (!config.cache.kv_cache_memory) config.cache.kv_cache_memory = kDefaultCpuKvCacheMemory;
  }
}

Status ValidateEngineConfig(const EngineConfig& c) {
  const SchedulerConfig& s = c.scheduler;
  const auto positive = [](int64_t v, const char* flag) {
    return v < 0 ? Status::InvalidArgument(fmt::format("{} must be positive (0: the default)", flag)) : Status::Ok();
  };
  GOODPUT_RETURN_IF_ERROR(positive(s.max_num_batched_tokens, "--max-num-batched-tokens"));
  GOODPUT_RETURN_IF_ERROR(positive(s.max_num_seqs, "--max-num-seqs"));
  GOODPUT_RETURN_IF_ERROR(positive(s.max_model_len, "--max-model-len"));
  GOODPUT_RETURN_IF_ERROR(positive(c.cache.block_size, "--block-size"));
  if (s.num_scheduler_steps < 1) return Status::InvalidArgument("--num-scheduler-steps must be at least 1");
  if (s.recv_interval < 1) return Status::InvalidArgument("--scheduler-recv-interval must be at least 1");
  if (s.long_prefill_token_threshold < 0 || s.max_offline_seqs < 0 || s.num_speculative_tokens < 0) {
    return Status::InvalidArgument("thresholds, caps and draft lengths must be >= 0");
  }
  if (c.cache.kv_cache_memory && *c.cache.kv_cache_memory <= 0) {
    return Status::InvalidArgument("--kv-cache-memory must be positive");
  }
  return Status::Ok();
}

}  // namespace goodput
