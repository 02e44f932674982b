// The serving engine's host side (data/hardware/engines.json): the CPU work an
// engine adds to every step and every request beside the GPU's, which the
// roofline alone does not see. vLLM's entry is fitted to the public validation
// set (data/validation/, docs/calibration.md); "none" is the GPU work alone.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "hw/cost_model.h"

namespace goodput {

struct EngineHost {
  std::string name;                 // "vllm", "none"
  double step_overhead_s = 0.0005;  // fixed cost of one step (launches, scheduling)
  double per_sequence_s = 0;        // per request in the step (inputs, sampling, detokenizing, streaming)
  double frontend_latency_s = 0;    // the API server's time before the scheduler sees a request
  bool async_scheduling = false;    // host work overlaps the GPU's (CostFactors::async_scheduling)
  double eager_prompt_kernel_s = 0;  // a kernel's launch in an eager prompt step (CostFactors::eager_kernel_s)
  // Its scheduler admits a request only with blocks for its whole length
  // (SchedulerConfig::guaranteed_no_evict, TensorRT-LLM's default).
  bool guaranteed_no_evict = false;
  // Its scheduler splits a prompt over steps (SchedulerConfig::chunked_prefill).
  bool chunked_prefill = true;
  // Its scheduler computes prompts before decodes (SchedulerConfig::prefill_first, SGLang's).
  bool prefill_first = false;
  // A figure the engine picks by the card's memory, in rising bounds: the value of the first step
  // whose bound the memory is below (a bound of 0 takes any memory), `value_tp4` instead (where > 0)
  // when the engine spans 4 GPUs or more.
  struct MemoryStep {
    double below_gib = 0;
    int64_t value = 0;
    int64_t value_tp4 = 0;
  };
  // Its default token budget (SGLang's --chunked-prefill-size), "tokens". Empty: vLLM's default
  // (ResolveEngineDefaults).
  std::vector<MemoryStep> token_budget_by_memory;
  // Under data parallelism that budget is the replicas' together, each taking its share (SGLang's
  // DP attention divides its chunk by the DP size); otherwise each replica's.
  bool token_budget_split_over_dp = false;
  // Where the engine fuses each tensor-parallel all-reduce with the residual add and RMSNorm after
  // it into one kernel (FlashInfer's or TensorRT-LLM's one-shot all-reduce): the all-reduce's fixed
  // time then (CostFactors::link_latency_s; the norm's kernel is still counted), for the listed
  // model architectures (config.json's architectures[0]) wider than min_hidden_size, on the listed
  // card architectures, one node, without data parallelism.
  struct FusedAllReduce {
    double latency_s = 0;
    std::vector<std::string> architectures, cards;
    int64_t min_hidden_size = 0;
  };
  std::optional<FusedAllReduce> fused_allreduce;
  // The most requests a decode step runs under a CUDA graph (SGLang's --cuda-graph-max-bs,
  // CostFactors::graph_max_batch), "batch" and "batch_tp4". Empty: every decode step replays one.
  std::vector<MemoryStep> graph_max_batch_by_memory;
  std::string source;

  // The fused all-reduce's fixed time for this deployment; nullopt where the engine runs it unfused.
  std::optional<double> FusedAllReduceLatency(const std::string& architecture, int64_t hidden_size,
                                              const std::string& card_arch, int tensor_parallel,
                                              int data_parallel) const;

  // The engine's own default token budget per replica on a card of `total_memory_bytes` with `dp`
  // data-parallel replicas; nullopt where it takes vLLM's.
  std::optional<int64_t> DefaultTokenBudget(int64_t total_memory_bytes, int dp) const;

  // The engine's own largest CUDA-graph decode batch per replica on a card of `total_memory_bytes`
  // in an engine of `gpus` GPUs (tensor x data parallel); nullopt where it has none.
  std::optional<int64_t> DefaultGraphMaxBatch(int64_t total_memory_bytes, int gpus) const;
};

// Every entry of the engines catalog, in file order. Errors name the file
// and the entry: a missing or negative figure, a duplicate name.
Result<std::vector<EngineHost>> LoadEngineHosts();

// The entry named `name`; NotFound naming the known ones otherwise.
Result<EngineHost> FindEngineHost(const std::string& name);

// `f` with the engine's host factors in place of its own.
CostFactors WithEngineHost(CostFactors f, const EngineHost& e);

}  // namespace goodput
