// The KV cache's blocks, as vLLM's block pool keeps them: a queue of free
// blocks (the least recently freed is taken first), a holder count per block,
// and for prefix caching the full blocks remembered by the hash of their
// prefix, so that a block freed by one request still serves the next request
// with the same prefix until the queue hands it out to someone else.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

namespace goodput {

class BlockPool {
 public:
  BlockPool(int64_t num_blocks, int num_groups);

  int64_t num_blocks() const { return static_cast<int64_t>(holders_.size()); }
  int64_t free() const { return free_count_; }  // cached-but-free blocks included
  int64_t cached_blocks() const { return cached_count_; }

  // Takes the block at the front of the free queue for one holder; a prefix
  // it still held is forgotten. Requires free() > 0.
  int32_t Take();
  // One more holder of `block` (a prefix hit): out of the free queue if it was there.
  void Share(int32_t block);
  // One holder fewer; with none left, the block goes to the back of the free
  // queue and keeps its prefix.
  void Release(int32_t block);

  // The block of `group` that holds the prefix `hash`, or -1.
  int32_t Cached(int group, uint64_t hash) const;
  // `block` (of `group`) holds the prefix `hash`; when another block already
  // does, that one stays the cached copy.
  void Remember(int group, uint64_t hash, int32_t block);

 private:
  void Unlink(int32_t block);
  void Forget(int32_t block);

  std::vector<int32_t> holders_;
  std::vector<int32_t> prev_, next_;  // the free queue, linked through the blocks (-1: none)
  std::vector<bool> queued_;
  int32_t head_ = -1, tail_ = -1;
  int64_t free_count_ = 0;
  std::vector<uint64_t> hash_;        // per block: the prefix it holds (0: none)
  std::vector<int32_t> hash_group_;   // per block: the group that hash is remembered in
  std::vector<std::unordered_map<uint64_t, int32_t>> cached_;  // per group: prefix hash -> block
  int64_t cached_count_ = 0;
};

}  // namespace goodput
