// The KV cache's layer groups and their block arithmetic, written once for
// every part that counts blocks: the engine's KvCacheManager, the planner
// (which attaches bytes per token to each group, plan/kv_layout.h), the
// simulator and the CPU pool. Groups follow vLLM's hybrid allocator: full
// attention grows a block every block_size tokens; a sliding window holds only
// the window; a state group (Mamba, DeltaNet) holds one block per sequence.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace goodput {

struct KvGroupSpec {
  enum class Type { kFull, kSlidingWindow, kState };
  Type type = Type::kFull;
  int64_t block_size = 16;
  int64_t sliding_window = 0;  // kSlidingWindow only

  // The most blocks a request of `tokens` tokens can hold at once when
  // computed in chunks of at most `max_chunk` tokens: a sliding group keeps
  // its window plus the chunk plus one block when chunk and block boundaries
  // fall worst, and never more than the request's own blocks.
  int64_t PeakBlocks(int64_t tokens, int64_t max_chunk) const;
  // The blocks vLLM counts for such a request when it reports capacity
  // (max_memory_usage_bytes): as PeakBlocks, except that a sliding group
  // counts window + chunk + 1 block even for a request shorter than that.
  int64_t ReservedBlocks(int64_t tokens, int64_t max_num_batched_tokens) const;
};

// Sums over the groups of one pool (each group takes its own blocks).
int64_t PeakBlocks(const std::vector<KvGroupSpec>& groups, int64_t tokens, int64_t max_chunk);
int64_t ReservedBlocks(const std::vector<KvGroupSpec>& groups, int64_t tokens, int64_t max_num_batched_tokens);

// vLLM's two start-up lines about the pool, both definitions of the first.
struct KvCapacity {
  int64_t num_blocks = 0;
  double max_concurrency = 0;      // num_blocks / blocks reserved per max-length request
  int64_t tokens_per_group = 0;    // older vLLM: num_blocks // len(groups) * block_size
  int64_t tokens_concurrency = 0;  // newer vLLM: int(max_concurrency * max_model_len)
};
KvCapacity CapacityForBlocks(const std::vector<KvGroupSpec>& groups, int64_t num_blocks, int64_t max_model_len,
                             int64_t max_num_batched_tokens);
// "GPU KV cache size: N tokens" and "Maximum concurrency for L tokens per
// request: X.XXx", each ending in a newline.
std::string KvCapacityLogLines(const KvCapacity& c, int64_t max_model_len);

}  // namespace goodput
