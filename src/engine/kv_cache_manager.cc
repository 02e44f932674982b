#include "engine/kv_cache_manager.h"

#include <algorithm>

namespace goodput {
namespace {

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

// The hash of a prefix: the previous block's hash chained with this block's
// tokens (64-bit FNV-1a, then never 0, which marks "no hash").
uint64_t ChainHash(uint64_t parent, const int32_t* tokens, int64_t n) {
  uint64_t h = parent ^ 0xcbf29ce484222325ull;
  for (int64_t i = 0; i < n; ++i) {
    uint32_t t = static_cast<uint32_t>(tokens[i]);
    for (int byte = 0; byte < 4; ++byte, t >>= 8) {
      h ^= t & 0xff;
      h *= 0x100000001b3ull;
    }
  }
  return h == 0 ? 1 : h;
}

}  // namespace

const char* FinishReasonName(FinishReason r) {
  switch (r) {
    case FinishReason::kNone: return "none";
    case FinishReason::kLength: return "length";
    case FinishReason::kStop: return "stop";
    case FinishReason::kMaxModelLen: return "max_model_len";
    case FinishReason::kAborted: return "abort";
    case FinishReason::kRejected: return "rejected";
  }
  return "?";
}

KvCacheManager::KvCacheManager(std::vector<KvGroupSpec> groups, int64_t num_blocks, bool prefix_caching)
    : groups_(std::move(groups)), num_blocks_(num_blocks), pool_(num_blocks, static_cast<int>(groups_.size())) {
  // vLLM caches full and sliding-window groups alike (a sliding group needs
  // only the last window of a prefix); recurrent state is not block-addressed.
  bool cacheable = !groups_.empty();
  for (const auto& g : groups_) {
    has_sliding_ = has_sliding_ || g.type == KvGroupSpec::Type::kSlidingWindow;
    cacheable = cacheable && g.type != KvGroupSpec::Type::kState && g.block_size == groups_[0].block_size;
  }
  prefix_caching_ = prefix_caching && cacheable;
}

int64_t KvCacheManager::AcquireCachedPrefix(RequestId id, const std::vector<int32_t>& tokens) {
  if (!prefix_caching_ || tokens.empty() || tables_.count(id)) return 0;
  const int64_t bs = groups_[0].block_size;
  // The prompt's whole blocks, leaving at least its last token to compute, up
  // to the first that a full-attention group does not hold.
  std::vector<uint64_t> hashes;
  for (uint64_t h = 0; static_cast<int64_t>(hashes.size() + 1) * bs <= static_cast<int64_t>(tokens.size()) - 1;) {
    h = ChainHash(h, tokens.data() + static_cast<int64_t>(hashes.size()) * bs, bs);
    if (!FullGroupsHold(h)) break;
    hashes.push_back(h);
  }
  const int64_t hit = SlidingGroupsHit(hashes);
  if (hit == 0) return 0;
  BlockTable t;
  t.groups.resize(groups_.size());
  for (size_t g = 0; g < groups_.size(); ++g) {
    // A sliding group attends only to its last window: earlier slots stay empty.
    const int64_t first = groups_[g].type == KvGroupSpec::Type::kSlidingWindow ? hit - WindowBlocks(groups_[g]) : 0;
    for (int64_t i = 0; i < hit; ++i) {
      if (i < first) {
        t.groups[g].push_back(kNullBlock);
        continue;
      }
      const int32_t block = pool_.Cached(static_cast<int>(g), hashes[i]);
      pool_.Share(block);
      t.groups[g].push_back(block);
    }
  }
  tables_.emplace(id, std::move(t));
  hashed_[id] = Hashed{hit, hashes[hit - 1]};
  return hit * bs;
}

int64_t KvCacheManager::WindowBlocks(const KvGroupSpec& g) { return CeilDiv(g.sliding_window - 1, g.block_size); }

bool KvCacheManager::FullGroupsHold(uint64_t hash) const {
  for (size_t g = 0; g < groups_.size(); ++g) {
    if (groups_[g].type == KvGroupSpec::Type::kFull && pool_.Cached(static_cast<int>(g), hash) < 0) return false;
  }
  return true;
}

// vLLM's hybrid coordinator: within the prefix every full-attention group
// holds, the longest whose last window every sliding group holds. Each
// sliding group may shorten the hit; shortened, another group's window may end
// elsewhere: repeated until every group agrees.
int64_t KvCacheManager::SlidingGroupsHit(const std::vector<uint64_t>& hashes) const {
  int64_t hit = static_cast<int64_t>(hashes.size());
  for (int64_t before = -1; before != hit;) {
    before = hit;
    for (size_t g = 0; g < groups_.size(); ++g) {
      if (groups_[g].type == KvGroupSpec::Type::kSlidingWindow) hit = SlidingHit(static_cast<int>(g), hashes, hit);
    }
  }
  return hit;
}

// vLLM's SlidingWindowManager.find_longest_cache_hit: from the end backwards,
// the first run of a window's worth of cached blocks; short of one, the run
// of cached blocks the prefix starts with.
int64_t KvCacheManager::SlidingHit(int group, const std::vector<uint64_t>& hashes, int64_t max_blocks) const {
  const int64_t need = WindowBlocks(groups_[static_cast<size_t>(group)]);
  int64_t run = 0;
  for (int64_t i = max_blocks - 1; i >= 0; --i) {
    if (pool_.Cached(group, hashes[static_cast<size_t>(i)]) < 0) {
      run = 0;
      continue;
    }
    if (++run >= need) return i + run;
  }
  return run;
}

void KvCacheManager::CacheFullBlocks(RequestId id, const std::vector<int32_t>& tokens, int64_t num_tokens) {
  if (!prefix_caching_) return;
  auto it = tables_.find(id);
  if (it == tables_.end()) return;
  const int64_t bs = groups_[0].block_size;
  const int64_t full = std::min(num_tokens, static_cast<int64_t>(tokens.size())) / bs;
  Hashed& h = hashed_[id];
  for (; h.blocks < full && h.blocks < static_cast<int64_t>(it->second.groups[0].size()); ++h.blocks) {
    h.hash = ChainHash(h.hash, tokens.data() + h.blocks * bs, bs);
    for (size_t g = 0; g < groups_.size(); ++g) {
      const int32_t block = it->second.groups[g][h.blocks];
      if (block != kNullBlock) pool_.Remember(static_cast<int>(g), h.hash, block);  // a window already passed
    }
  }
}

// vLLM's remove_skipped_blocks: a new token at position num_computed attends
// back to num_computed - window + 1, so whole blocks before that are done.
void KvCacheManager::ReleaseSkipped(BlockTable& t, int64_t num_computed) {
  for (size_t g = 0; g < groups_.size(); ++g) {
    const KvGroupSpec& spec = groups_[g];
    if (spec.type != KvGroupSpec::Type::kSlidingWindow) continue;
    const int64_t skipped_tokens = num_computed - spec.sliding_window + 1;
    const int64_t skipped_blocks = std::max<int64_t>(0, skipped_tokens / spec.block_size);
    auto& blocks = t.groups[g];
    for (int64_t i = 0; i < std::min<int64_t>(skipped_blocks, static_cast<int64_t>(blocks.size())); ++i) {
      if (blocks[i] == kNullBlock) continue;
      pool_.Release(blocks[i]);
      blocks[i] = kNullBlock;
    }
  }
}

int64_t KvCacheManager::NewBlocksNeeded(const BlockTable& t, int64_t total_tokens) const {
  int64_t needed = 0;
  for (size_t g = 0; g < groups_.size(); ++g) {
    const int64_t have = static_cast<int64_t>(t.groups[g].size());
    const int64_t want =
        groups_[g].type == KvGroupSpec::Type::kState ? 1 : CeilDiv(total_tokens, groups_[g].block_size);
    needed += std::max<int64_t>(0, want - have);
  }
  return needed;
}

const BlockTable* KvCacheManager::AllocateSlots(RequestId id, int64_t num_computed, int64_t num_new) {
  auto [it, inserted] = tables_.try_emplace(id);
  BlockTable& t = it->second;
  if (inserted) t.groups.resize(groups_.size());
  if (has_sliding_) ReleaseSkipped(t, num_computed);
  const int64_t total = num_computed + num_new;
  const int64_t needed = NewBlocksNeeded(t, total);
  if (needed == 0) return &t;
  if (needed > free_blocks()) {
    if (inserted) tables_.erase(it);
    return nullptr;
  }
  for (size_t g = 0; g < groups_.size(); ++g) {
    const int64_t want = groups_[g].type == KvGroupSpec::Type::kState ? 1 : CeilDiv(total, groups_[g].block_size);
    auto& blocks = t.groups[g];
    while (static_cast<int64_t>(blocks.size()) < want) blocks.push_back(pool_.Take());
  }
  return &t;
}

void KvCacheManager::Free(RequestId id) {
  auto it = tables_.find(id);
  if (it == tables_.end()) return;
  // Released from the last block to the first: the free queue then hands out
  // a prefix's later blocks before its earlier ones, which more requests share.
  for (const auto& blocks : it->second.groups) {
    for (auto b = blocks.rbegin(); b != blocks.rend(); ++b) {
      if (*b != kNullBlock) pool_.Release(*b);
    }
  }
  tables_.erase(it);
  hashed_.erase(id);
}

int64_t KvCacheManager::BlocksToReach(RequestId id, int64_t tokens, int64_t max_chunk) const {
  const BlockTable* t = Table(id);
  int64_t needed = 0;
  for (size_t g = 0; g < groups_.size(); ++g) {
    const std::vector<int32_t>* blocks = t ? &t->groups[g] : nullptr;
    // Only a sliding-window group has released (null) slots.
    const int64_t have = !blocks ? 0
                         : groups_[g].type == KvGroupSpec::Type::kSlidingWindow
                             ? std::count_if(blocks->begin(), blocks->end(), [](int32_t b) { return b != kNullBlock; })
                             : static_cast<int64_t>(blocks->size());
    needed += std::max<int64_t>(0, groups_[g].PeakBlocks(tokens, max_chunk) - have);
  }
  return needed;
}

const BlockTable* KvCacheManager::Table(RequestId id) const {
  auto it = tables_.find(id);
  return it == tables_.end() ? nullptr : &it->second;
}

double KvCacheManager::Usage() const {
  return num_blocks_ > 0 ? static_cast<double>(num_blocks_ - free_blocks()) / static_cast<double>(num_blocks_) : 0;
}

}  // namespace goodput
