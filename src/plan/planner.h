// The memory planner behind `goodput plan`: counts what uses GPU memory the
// way vLLM will allocate it and derives KV capacity, concurrency for a length
// distribution, a recommended max_num_seqs and the safety margin.
//
// Memory follows vLLM V1's profiling: requested = total x utilization; the KV
// pool is what remains of it after weights, the activation peak of the
// profiling run and non-torch memory. CUDA graphs are captured after the pool
// is allocated, so they come out of the headroom (1 - utilization) x total.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "engine/engine_config.h"
#include "model/model_spec.h"
#include "model/params.h"
#include "plan/kv_layout.h"
#include "workload/length_dist.h"
#include "plan/weights.h"

namespace goodput {

struct PlanOptions {
  std::string gpu;                           // catalog name, for display
  int64_t total_memory = 0;                  // bytes vLLM sees as total
  bool total_is_nominal = false;             // the catalog had only the nominal capacity
  bool cpu = false;                          // the CPU engine (vLLM's CPU defaults), not a GPU
  int tensor_parallel = 1;
  // Scheduler and cache settings (sizes at 0 resolve to vLLM's defaults for
  // the GPU); kv_cache_dtype: auto (model dtype), bf16, fp16, fp8, fp8_e5m2,
  // fp32; kv_cache_memory: the pool size, skipping profiling.
  EngineConfig engine;
  std::string weights = "auto";              // see ResolveWeightPrecision
  // Parts a quantized checkpoint leaves in the model dtype, beside what its
  // config says (ParseUnquantizedParts: "attention,draft", ...).
  std::string unquantized;
  std::string gpu_arch;                      // "sm90", ...; empty when not known
  std::string mxfp4_moe_backend = "auto";    // see ResolveMxfp4MoeBackend
  std::string mamba_ssm_cache_dtype = "auto";  // auto: the config's mamba_ssm_dtype, else the model dtype
  double gpu_memory_utilization = 0.9;
  // SGLang's --mem-fraction-static instead: the weights and the KV pool
  // together take this share of total memory, and SGLang takes no activation
  // peak out of it (its activations and CUDA graphs live in the rest).
  std::optional<double> mem_fraction_static;
  int64_t kernel_block_alignment = 16;
  int num_draft_layers = 0;                  // EAGLE-style draft layers sharing the KV pool
  bool expert_parallel = false;              // vLLM's --enable-expert-parallel: whole experts per GPU
  // vLLM's --data-parallel-size: engine replicas of tensor_parallel GPUs
  // each, with their own requests and KV pools (this plan is one replica's,
  // per GPU), whose MoE layers form one group of data_parallel x
  // tensor_parallel GPUs (whole experts with expert_parallel, else slices).
  int data_parallel = 1;
  double routing_imbalance = 1.0;            // expert parallel: the busiest GPU's load / the mean
  bool disable_hybrid_kv_cache_manager = false;
  // vLLM's --attention-config '{"disable_flashinfer_q_quantization": true}'
  // (VLLM_FLASHINFER_DISABLE_Q_QUANTIZATION=1 in earlier releases): with an
  // fp8 KV cache the query stays in the model dtype (PrefillKvCopyBytes).
  bool disable_flashinfer_q_quantization = false;
  std::optional<int64_t> weights_memory;     // measured values (vLLM's profiling log) replace estimates
  std::optional<int64_t> activation_memory;
  std::optional<int64_t> non_torch_memory;
  std::optional<int64_t> cuda_graph_memory;
  // Headroom wanted beyond CUDA graphs: 1.5 GiB covers the largest overshoot
  // of a profiled budget in published vLLM start-ups (1.37 GiB, vllm#51590;
  // docs/plan.md, "The margin").
  int64_t safety_buffer = int64_t{3} << 29;
  std::optional<LengthDistribution> lengths;
  double confidence = 0.99;                  // for the conservative concurrency
};

// GPUs an MoE layer's routed experts are spread over: every replica's.
inline int MoeGroupSize(const PlanOptions& o) { return o.tensor_parallel * o.data_parallel; }

struct MemoryItem {
  int64_t bytes = 0;
  bool measured = false;  // given by the user rather than estimated
};

struct KindShare {
  LayerKind kind = LayerKind::kFullAttention;
  int64_t layers = 0;
  int64_t bytes_per_token = 0;     // per layer, attention kinds
  int64_t bytes_per_sequence = 0;  // per layer, state kinds
  int64_t bytes_max_len = 0;       // all layers of this kind, one max-length sequence
  double share = 0;                // of the sum over kinds
};

struct LengthPlan {
  std::string description;
  double mean_length = 0;
  int64_t quantile_length = 0;       // at `confidence`
  double mean_blocks = 0;            // blocks one request holds at its peak
  double sd_blocks = 0;
  double max_concurrent_mean = 0;    // num_blocks / mean_blocks
  int64_t conservative = 0;          // n with n*mean + z*sqrt(n)*sd <= num_blocks
  int64_t recommended_max_num_seqs = 0;
  bool kv_binds = false;             // the pool fills before max_num_seqs is reached
  double over_max_len_share = 0;     // share of lengths beyond max_model_len (vLLM rejects them)
};

struct Plan {
  PlanOptions options;  // with defaults resolved
  ModelSpec model;
  ParamCounts params;
  WeightPrecision precision;
  DType kv_dtype = DType::kBFloat16;
  DType ssm_dtype = DType::kBFloat16;
  int64_t total = 0;
  int64_t requested = 0;
  MemoryItem weights, activation, non_torch, cuda_graphs;
  // Which of the profiling run's peaks the activation estimate is: "forward"
  // or "sampler" (the knob that lowers it: the token budget or
  // --max-num-seqs); empty when the activation was measured.
  std::string activation_peak;
  int64_t kv_pool = 0;
  int64_t headroom = 0;  // memory left outside requested (or outside everything, with --kv-cache-memory)
  // Memory one prefilling request takes during a step that no profile counts
  // (PrefillKvCopyBytes); 0 on every other path.
  int64_t prefill_kv_copy = 0;
  // What the headroom leaves beyond the CUDA graphs, one prefill's KV copy and
  // the safety buffer; below zero the engine may not start, or dies at its
  // first prefill.
  int64_t Margin() const { return headroom - cuda_graphs.bytes - prefill_kv_copy - options.safety_buffer; }
  // vLLM's start-up suggestion when it profiled (no --kv-cache-memory): the
  // pool that fits the requested memory, and the one that fills the card,
  // each less its 150 MiB redundancy (VllmKvCacheMemorySuggestion).
  std::optional<int64_t> suggest_requested, suggest_full;
  std::vector<KindShare> kinds;
  KvLayout layout;
  KvCapacity capacity;
  int64_t blocks_per_max_request = 0;
  int64_t estimated_max_model_len = 0;  // longest length that fits when one max-length request does not
  std::optional<LengthPlan> lengths;
  std::string startup_error;            // why vLLM would refuse to start; empty when it starts
  std::vector<std::string> warnings;
};

// Resolves defaults and computes the plan. Errors are bad inputs; a
// configuration that would not start is a plan with startup_error set.
Result<Plan> MakePlan(const ModelSpec& model, const PlanOptions& options);

// vLLM's suggestion at start-up (gpu_worker.py, compile_or_warm_up_model):
// "Replace gpu_memory_utilization config with --kv-cache-memory=R to fit into
// requested memory, or --kv-cache-memory=F to fully utilize gpu memory",
// R = requested - non-KV - 150 MiB and F = free at start - non-KV - 150 MiB,
// non-KV = weights + activation peak + non-torch + CUDA graphs. The free
// memory at start is taken as the total (vLLM logs e.g. 79.99 of 80.0 GiB).
constexpr int64_t kVllmRedundancyBuffer = int64_t{150} << 20;
void VllmKvCacheMemorySuggestion(Plan& p);

// Estimates (used unless measured values are given).
// vLLM's profiling peak is the larger of these two (the plan's activation):
// a forward pass over the token budget, and the dummy sampler run over
// min(max_num_seqs, budget) sequences.
int64_t EstimateForwardPeak(const ModelSpec& m, int tp, int64_t max_num_batched_tokens);
int64_t EstimateSamplerPeak(const ModelSpec& m, int64_t max_num_batched_tokens, int64_t max_num_seqs);
int64_t EstimateNonTorch(int tp);

// Non-KV memory that only an fp8 KV cache with an unquantized query takes:
// vLLM's FlashInfer backend on sm100 (flashinfer.py,
// trtllm_prefill_attn_kvfp8_dequant, vLLM pull request #24197) runs a prefill
// on TensorRT-LLM's kernel, which takes no 16-bit query over an fp8 cache, so
// each attention layer first copies its prefills' pages into a cache in the
// model dtype: num_prefills x cdiv(max_model_len, block size) + 1 pages, the
// block table's full width whatever the context. The prefill takes that
// kernel when FlashInfer's own cannot serve it on sm100: attention sinks
// (gpt-oss) or pages over 64 tokens (a hybrid model's raised block size).
// vLLM's profiling run skips attention, so no budget holds it. Returns the
// bytes for one prefilling request (0 off that path); a step with N
// prefills takes N x (width) + 1 pages, about N times it.
int64_t PrefillKvCopyBytes(const Plan& p);
int64_t EstimateCudaGraphs();

}  // namespace goodput
