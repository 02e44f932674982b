// goodput's CPU engine driven step by step, for the bench programs that time
// it (cpu_decode, vs_llama_cpp): the scheduler, the KV manager and the
// runner, without a server around them.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "core/clock.h"
#include "cpu/cpu_runner.h"
#include "engine/scheduler.h"

namespace goodput::bench {

struct CpuEngine {
  ModelSpec m;
  cpu::CpuKvLayout layout;
  std::unique_ptr<KvCacheManager> kv;
  std::unique_ptr<Scheduler> sched;
  std::unique_ptr<cpu::CpuModelRunner> runner;
};

// An fp32-KV engine of `blocks` 16-token blocks, up to 4,096 tokens a step.
CpuEngine MakeCpuEngine(const ModelSpec& m, const cpu::ModelWeights& w, int64_t blocks);

// Adds `n` greedy requests of `prompt` tokens (ids 3 + (t*31 + i) % 250, i.e.
// bytes) that each generate `max_tokens`, ignoring EOS.
void AddRequests(CpuEngine& e, int n, int prompt, int max_tokens);

// The tokens request i's prompt holds (as AddRequests builds them).
std::vector<int32_t> PromptTokens(int i, int prompt);

// Runs one step; returns its runner time (seconds). `tokens` gets the step's
// batched tokens; `plan` a copy of its plan and `sampled` its sampled tokens
// when given.
double TimedStep(CpuEngine& e, RealClock& clock, int64_t* tokens, StepPlan* plan = nullptr,
                 std::vector<int32_t>* sampled = nullptr);

}  // namespace goodput::bench
