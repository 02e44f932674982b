#include "engine/block_pool.h"

#include <cassert>
#include <cstddef>

namespace goodput {

BlockPool::BlockPool(int64_t num_blocks, int num_groups)
    : holders_(static_cast<size_t>(num_blocks), 0),
      prev_(static_cast<size_t>(num_blocks), -1),
      next_(static_cast<size_t>(num_blocks), -1),
      queued_(static_cast<size_t>(num_blocks), false),
      hash_(static_cast<size_t>(num_blocks), 0),
      hash_group_(static_cast<size_t>(num_blocks), -1),
      cached_(static_cast<size_t>(num_groups)) {
  for (int32_t b = 0; b < static_cast<int32_t>(num_blocks); ++b) {
    holders_[b] = 1;
    Release(b);
  }
}

void BlockPool::Unlink(int32_t b) {
  (prev_[b] >= 0 ? next_[prev_[b]] : head_) = next_[b];
  (next_[b] >= 0 ? prev_[next_[b]] : tail_) = prev_[b];
  prev_[b] = next_[b] = -1;
  queued_[b] = false;
  --free_count_;
}

void BlockPool::Forget(int32_t b) {
  if (hash_[b] == 0) return;
  auto& map = cached_[hash_group_[b]];
  auto it = map.find(hash_[b]);
  if (it != map.end() && it->second == b) {
    map.erase(it);
    --cached_count_;
  }
  hash_[b] = 0;
  hash_group_[b] = -1;
}

int32_t BlockPool::Take() {
  assert(head_ >= 0);
  const int32_t b = head_;
  Unlink(b);
  Forget(b);  // its content is about to be overwritten
  holders_[b] = 1;
  return b;
}

void BlockPool::Share(int32_t b) {
  if (queued_[b]) Unlink(b);
  ++holders_[b];
}

void BlockPool::Release(int32_t b) {
  assert(holders_[b] > 0);
  if (--holders_[b] > 0) return;
  prev_[b] = tail_;
  next_[b] = -1;
  (tail_ >= 0 ? next_[tail_] : head_) = b;
  tail_ = b;
  queued_[b] = true;
  ++free_count_;
}

int32_t BlockPool::Cached(int group, uint64_t hash) const {
  const auto& map = cached_[group];
  auto it = map.find(hash);
  return it == map.end() ? -1 : it->second;
}

void BlockPool::Remember(int group, uint64_t hash, int32_t b) {
  if (hash_[b] != 0 || !cached_[group].try_emplace(hash, b).second) return;
  hash_[b] = hash;
  hash_group_[b] = group;
  ++cached_count_;
}

}  // namespace goodput
