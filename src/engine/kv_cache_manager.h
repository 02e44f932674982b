// The paged KV cache: one pool of blocks shared by layer groups of different
// kinds (as vLLM's hybrid allocator). Full-attention groups grow a block every
// block_size tokens; sliding-window groups release blocks that left the
// window; state groups (Mamba, DeltaNet) hold one block per sequence.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "engine/block_pool.h"
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
  // With `prefix_caching` (vLLM's automatic prefix caching), full blocks are
  // remembered by the hash of the tokens up to their end, so that requests
  // with the same prefix share them (a sliding-window group only the last
  // window's blocks); off where a group holds recurrent state or block sizes
  // differ (see prefix_caching()).
  KvCacheManager(std::vector<KvGroupSpec> groups, int64_t num_blocks, bool prefix_caching = false);

  // Shares with request `id`, which holds no blocks yet, the cached blocks of
  // the longest cached prefix of `token_ids` in whole blocks, leaving at least
  // its last token to compute. Returns how many tokens they hold (0 without
  // prefix caching, token ids or a hit). Free(id) gives them back.
  int64_t AcquireCachedPrefix(RequestId id, const std::vector<int32_t>& token_ids);
  // The full blocks of `id` holding the first `num_tokens` of `token_ids`
  // become shareable (no-op without prefix caching).
  void CacheFullBlocks(RequestId id, const std::vector<int32_t>& token_ids, int64_t num_tokens);
  bool prefix_caching() const { return prefix_caching_; }

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
  int64_t PeakBlocks(int64_t tokens, int64_t max_chunk) const {
    return goodput::PeakBlocks(groups_, tokens, max_chunk);
  }

  // Blocks request `id` would still have to take to hold `tokens` tokens at
  // its peak: PeakBlocks less those it holds (all of them for an id holding none).
  int64_t BlocksToReach(RequestId id, int64_t tokens, int64_t max_chunk) const;

  const BlockTable* Table(RequestId id) const;
  int64_t num_blocks() const { return num_blocks_; }
  int64_t free_blocks() const { return pool_.free(); }
  int64_t cached_blocks() const { return pool_.cached_blocks(); }  // blocks holding a remembered prefix (held or free)
  double Usage() const;  // used / total, in [0, 1]
  const std::vector<KvGroupSpec>& groups() const { return groups_; }

 private:
  void ReleaseSkipped(BlockTable& t, int64_t num_computed);
  static int64_t WindowBlocks(const KvGroupSpec& g);  // blocks a sliding group attends back to
  bool FullGroupsHold(uint64_t hash) const;  // every full-attention group has a block for the prefix
  int64_t SlidingGroupsHit(const std::vector<uint64_t>& hashes) const;
  int64_t SlidingHit(int group, const std::vector<uint64_t>& hashes, int64_t max_blocks) const;
  int64_t NewBlocksNeeded(const BlockTable& t, int64_t total_tokens) const;

  std::vector<KvGroupSpec> groups_;
  bool has_sliding_ = false;
  bool prefix_caching_ = false;
  int64_t num_blocks_;
  BlockPool pool_;
  std::unordered_map<RequestId, BlockTable> tables_;
  // Prefix caching: per request, the leading blocks registered so far and
  // the hash of the prefix they end.
  struct Hashed {
    int64_t blocks = 0;
    uint64_t hash = 0;
  };
  std::unordered_map<RequestId, Hashed> hashed_;
};

}  // namespace goodput
