// vLLM's KV cache accounting, reproduced: per-layer cache specs and page sizes,
// the attention block size raised to fit a Mamba/DeltaNet state page, state
// page padding, KV cache groups with padding layers, the number of blocks,
// and the two start-up lines ("GPU KV cache size", "Maximum concurrency").
// Follows vllm/v1/core/kv_cache_utils.py, vllm/v1/kv_cache_interface.py and
// HybridAttentionMambaModelConfig (vllm/model_executor/models/config.py).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"
#include "engine/kv_groups.h"
#include "model/dtype.h"
#include "model/model_spec.h"

namespace goodput {

// One layer's cache (vLLM's KVCacheSpec): the engine's group spec (kind of
// group, block size, window) with the bytes it takes attached.
struct CacheSpec {
  KvGroupSpec group;                // state layers: block_size is the shared (attention) block size
  LayerKind kind = LayerKind::kFullAttention;  // which layer kind (MLA, Mamba-1/2, DeltaNet, ...)
  int64_t bytes_per_token = 0;      // attention kinds: K+V (or MLA latent) bytes per token per layer
  int64_t state_bytes = 0;          // state kinds: conv + ssm bytes per sequence per layer
  int64_t padded_page_bytes = 0;    // state kinds: page padded to the attention page; 0 = unpadded

  bool is_state() const { return group.type == KvGroupSpec::Type::kState; }
  int64_t RealPageBytes() const { return is_state() ? state_bytes : group.block_size * bytes_per_token; }
  int64_t PageBytes() const { return padded_page_bytes > 0 ? padded_page_bytes : RealPageBytes(); }
  bool SameCache(const CacheSpec& o) const;
  // "full attention", "sliding window", "MLA" or "mamba state".
  const char* TypeName() const;
};

struct CacheGroup {
  CacheSpec spec;
  std::vector<int> layers;  // model layer indices
};

// Inputs that decide the layout.
struct KvLayoutOptions {
  DType kv_dtype = DType::kBFloat16;         // attention KV
  DType conv_state_dtype = DType::kBFloat16;  // Mamba/DeltaNet conv state
  DType ssm_state_dtype = DType::kBFloat16;   // Mamba/DeltaNet recurrent state
  int64_t block_size = 0;                     // 0: vLLM's default (16; 64 for MLA)
  int64_t kernel_block_alignment = 16;        // attention kernels want block sizes in these steps
  int tensor_parallel = 1;
  int64_t max_model_len = 0;
  int64_t max_num_batched_tokens = 8192;
  bool disable_hybrid_kv_cache_manager = false;  // vLLM's flag: sliding layers are kept like full ones
};

struct KvLayout {
  std::vector<CacheSpec> layer_specs;  // one per cache-holding layer, model order
  std::vector<int> layer_index;        // model layer index of each layer_specs entry
  std::vector<CacheGroup> groups;
  int64_t group_size = 0;              // layers per group (pools share one layer of each group)
  int64_t padding_layers = 0;          // vLLM's "Add N padding layers"
  int64_t page_bytes = 0;              // uniform page size of every group
  int64_t attention_block_size = 0;    // tokens per block of the attention groups
  bool block_size_raised = false;      // "Setting attention block size to N tokens ..."
  int64_t state_page_bytes = 0;        // unpadded Mamba/DeltaNet page (0: none)
  double state_padding_pct = 0;        // "Padding mamba page size by X% ..."
  std::vector<std::string> log_lines;  // vLLM's own messages for these decisions

  // vLLM: available // page_size // group_size.
  int64_t NumBlocks(int64_t available_bytes) const;
  // The groups as the engine's KV manager sees them (one spec per group).
  std::vector<KvGroupSpec> EngineGroups() const;
};

Result<KvLayout> BuildKvLayout(const ModelSpec& model, const KvLayoutOptions& options);

// vLLM's start-up capacity (engine/kv_groups.h) for a pool of `available_bytes`.
KvCapacity ComputeCapacity(const KvLayout& layout, int64_t available_bytes, int64_t max_model_len,
                           int64_t max_num_batched_tokens);
}  // namespace goodput
