#include "engine/kv_cache_manager.h"

#include <algorithm>

namespace goodput {
namespace {

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

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

KvCacheManager::KvCacheManager(std::vector<KvGroupSpec> groups, int64_t num_blocks)
    : groups_(std::move(groups)), num_blocks_(num_blocks) {
  for (const auto& g : groups_) has_sliding_ = has_sliding_ || g.type == KvGroupSpec::Type::kSlidingWindow;
  free_.reserve(static_cast<size_t>(num_blocks));
  for (int64_t b = num_blocks - 1; b >= 0; --b) free_.push_back(static_cast<int32_t>(b));
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
      free_.push_back(blocks[i]);
      blocks[i] = kNullBlock;
    }
  }
}

int64_t KvCacheManager::NewBlocksNeeded(const BlockTable& t, int64_t total_tokens) const {
  int64_t needed = 0;
  for (size_t g = 0; g < groups_.size(); ++g) {
    const int64_t have = static_cast<int64_t>(t.groups[g].size());
    const int64_t want = groups_[g].type == KvGroupSpec::Type::kState ? 1 : CeilDiv(total_tokens, groups_[g].block_size);
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
    while (static_cast<int64_t>(blocks.size()) < want) {
      blocks.push_back(free_.back());
      free_.pop_back();
    }
  }
  return &t;
}

void KvCacheManager::Free(RequestId id) {
  auto it = tables_.find(id);
  if (it == tables_.end()) return;
  for (const auto& blocks : it->second.groups) {
    for (int32_t b : blocks) {
      if (b != kNullBlock) free_.push_back(b);
    }
  }
  tables_.erase(it);
}

const BlockTable* KvCacheManager::Table(RequestId id) const {
  auto it = tables_.find(id);
  return it == tables_.end() ? nullptr : &it->second;
}

double KvCacheManager::Usage() const {
  return num_blocks_ > 0 ? static_cast<double>(num_blocks_ - free_blocks()) / static_cast<double>(num_blocks_) : 0;
}

}  // namespace goodput
