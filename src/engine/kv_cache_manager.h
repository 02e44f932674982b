// The paged KV cache: one pool of blocks shared by layer groups of different
// kinds (as vLLM's hybrid allocator). Full-attention groups grow a block every
// block_size tokens; sliding-window groups release blocks that left the
// window; state groups (Mamba, DeltaNet) hold one block per sequence.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "engine/kv_groups.h"
#include "engine/request.h"

namespace goodput {

constexpr int32_t kNullBlock = -1;  // a sliding-window slot whose block was released

// Block ids per group; opaque to the scheduler.
struct BlockTable {
  std::vector<std::vector<int32_t>> groups;
};

class KvCacheManager {
 public:
  KvCacheManager(std::vector<KvGroupSpec> groups, int64_t num_blocks);

  // Makes room for `num_new` tokens after `num_computed` for request `id`,
  // first releasing sliding-window blocks no longer attended. All or nothing:
  // returns the request's table, or nullptr when the pool cannot hold it (and
  // then no block was taken).
  const BlockTable* AllocateSlots(RequestId id, int64_t num_computed, int64_t num_new);

  // Returns every block of `id` to the pool. Unknown ids are ignored.
  void Free(RequestId id);

  // The most blocks a request of `tokens` tokens holds at once in this pool
  // (goodput::PeakBlocks over its groups). A request needing more than
  // num_blocks() can never run.
  int64_t PeakBlocks(int64_t tokens, int64_t max_chunk) const { return goodput::PeakBlocks(groups_, tokens, max_chunk); }

  const BlockTable* Table(RequestId id) const;
  int64_t num_blocks() const { return num_blocks_; }
  int64_t free_blocks() const { return static_cast<int64_t>(free_.size()); }
  double Usage() const;  // used / total, in [0, 1]
  const std::vector<KvGroupSpec>& groups() const { return groups_; }

 private:
  void ReleaseSkipped(BlockTable& t, int64_t num_computed);
  int64_t NewBlocksNeeded(const BlockTable& t, int64_t total_tokens) const;

  std::vector<KvGroupSpec> groups_;
  bool has_sliding_ = false;
  int64_t num_blocks_;
  std::vector<int32_t> free_;  // free block ids, used as a stack
  std::unordered_map<RequestId, BlockTable> tables_;
};

}  // namespace goodput
