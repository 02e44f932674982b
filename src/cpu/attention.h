// Attention of one request's chunk of new tokens over its paged KV cache:
// causal within the chunk, windowed on sliding-window layers, grouped-query
// (each KV head serves heads / kv_heads query heads).
#pragma once

#include <cstdint>
#include <vector>

#include "cpu/kv_store.h"

namespace goodput::cpu {

struct AttentionShape {
  int64_t heads = 0, kv_heads = 0, head_dim = 0;
};

struct ChunkView {
  int64_t num_computed = 0;              // tokens before the chunk (their KV is stored)
  int64_t num_new = 0;                   // the chunk's tokens (their KV is stored too)
  const std::vector<int32_t>* blocks = nullptr;  // the layer group's block table
  int64_t window = 0;                    // sliding window; 0 = full attention
};

// Buffers reused across calls (growing only): a step's attention allocates nothing.
struct AttentionScratch {
  std::vector<float> k, v, qg, scores, o, k_row, panel;
};

// q: the chunk's query rows [num_new x heads*head_dim]; out: same shape.
// Only the query heads of KV heads [kv_head_begin, kv_head_end) are written
// (end -1: all), so two threads can share one request's heads.
void PagedAttention(const KvStore& kv, int layer, const AttentionShape& s, const ChunkView& c, const float* q,
                    float* out, AttentionScratch& scratch, int64_t kv_head_begin = 0, int64_t kv_head_end = -1);

}  // namespace goodput::cpu
