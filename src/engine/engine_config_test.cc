#include "engine/engine_config.h"

#include <gtest/gtest.h>

namespace goodput {
namespace {

constexpr int64_t kGiB = int64_t{1} << 30;

EngineConfig Resolved(EngineDevice device, EngineConfig c = {}) {
  ResolveEngineDefaults(c, device, 4096);
  return c;
}

// vLLM's table (vllm/engine/arg_utils.py get_batch_defaults, API server):
// H100-class 1024 / 8192, other GPUs (A100 included) 256 / 2048, CPU 128 / 2048.
TEST(EngineConfig, DefaultsFollowVllmsTablePerDevice) {
  EXPECT_EQ(GpuDevice(80 * kGiB, "h100-sxm"), EngineDevice::kLargeGpu);
  EXPECT_EQ(GpuDevice(80 * kGiB, "a100-80gb"), EngineDevice::kGpu);  // vLLM PR 17885
  EXPECT_EQ(GpuDevice(24 * kGiB, "l4"), EngineDevice::kGpu);
  const EngineConfig large = Resolved(EngineDevice::kLargeGpu);
  EXPECT_EQ(large.scheduler.max_num_seqs, 1024);
  EXPECT_EQ(large.scheduler.max_num_batched_tokens, 8192);
  EXPECT_EQ(large.scheduler.max_model_len, 4096);
  EXPECT_EQ(large.cache.block_size, 0);  // the planner resolves it with the model's layout
  EXPECT_FALSE(large.cache.kv_cache_memory.has_value());
  const EngineConfig gpu = Resolved(EngineDevice::kGpu);
  EXPECT_EQ(gpu.scheduler.max_num_seqs, 256);
  EXPECT_EQ(gpu.scheduler.max_num_batched_tokens, 2048);
  const EngineConfig cpu = Resolved(EngineDevice::kCpu);
  EXPECT_EQ(cpu.scheduler.max_num_seqs, 128);
  EXPECT_EQ(cpu.scheduler.max_num_batched_tokens, 2048);
  EXPECT_EQ(cpu.cache.block_size, 16);
  EXPECT_EQ(cpu.cache.kv_cache_memory, kGiB);
}

TEST(EngineConfig, GivenValuesAreKept) {
  EngineConfig c;
  c.scheduler.max_num_seqs = 7;
  c.scheduler.max_num_batched_tokens = 512;
  c.scheduler.max_model_len = 1000;
  c.cache.block_size = 32;
  c.cache.kv_cache_memory = 5;
  const EngineConfig r = Resolved(EngineDevice::kCpu, c);
  EXPECT_EQ(r.scheduler.max_num_seqs, 7);
  EXPECT_EQ(r.scheduler.max_num_batched_tokens, 512);
  EXPECT_EQ(r.scheduler.max_model_len, 1000);
  EXPECT_EQ(r.cache.block_size, 32);
  EXPECT_EQ(r.cache.kv_cache_memory, 5);
}

TEST(EngineConfig, ValidationNamesTheFlag) {
  EngineConfig c;
  EXPECT_TRUE(ValidateEngineConfig(c).ok());
  c.scheduler.max_num_seqs = -1;
  EXPECT_NE(ValidateEngineConfig(c).message().find("--max-num-seqs"), std::string::npos);
  c = {};
  c.cache.block_size = -16;
  EXPECT_NE(ValidateEngineConfig(c).message().find("--block-size"), std::string::npos);
  c = {};
  c.cache.kv_cache_memory = 0;
  EXPECT_NE(ValidateEngineConfig(c).message().find("--kv-cache-memory"), std::string::npos);
  c = {};
  c.scheduler.num_scheduler_steps = 0;
  EXPECT_NE(ValidateEngineConfig(c).message().find("--num-scheduler-steps must be at least 1"), std::string::npos);
  c = {};
  c.scheduler.recv_interval = 0;
  EXPECT_NE(ValidateEngineConfig(c).message().find("--scheduler-recv-interval must be at least 1"), std::string::npos);
  EXPECT_EQ(ParseSchedulingPolicy("lifo").status().message(), "unknown scheduling policy 'lifo' (fcfs, priority, slo)");
}

}  // namespace
}  // namespace goodput
