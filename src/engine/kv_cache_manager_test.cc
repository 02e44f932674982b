#include "engine/kv_cache_manager.h"

#include <algorithm>

#include <gtest/gtest.h>

#include <utility>
#include <vector>

namespace goodput {
namespace {

using Type = KvGroupSpec::Type;

int64_t Live(const BlockTable* t, size_t g) {
  int64_t n = 0;
  for (int32_t b : t->groups[g]) n += b != kNullBlock;
  return n;
}

TEST(KvCacheManager, FullAttentionGrowsABlockEveryBlockSizeTokens) {
  KvCacheManager kv({{Type::kFull, 4, 0}}, 10);
  const BlockTable* t = kv.AllocateSlots(1, 0, 6);
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->groups[0].size(), 2u);
  EXPECT_EQ(kv.AllocateSlots(1, 6, 1)->groups[0].size(), 2u);  // 7 tokens: still 2 blocks
  EXPECT_EQ(kv.AllocateSlots(1, 7, 2)->groups[0].size(), 3u);  // 9 tokens: 3 blocks
  EXPECT_DOUBLE_EQ(kv.Usage(), 0.3);
  kv.Free(1);
  EXPECT_DOUBLE_EQ(kv.Usage(), 0.0);
  EXPECT_EQ(kv.free_blocks(), 10);
}

TEST(KvCacheManager, AllOrNothing) {
  KvCacheManager kv({{Type::kFull, 4, 0}}, 3);
  EXPECT_EQ(kv.AllocateSlots(1, 0, 13), nullptr);  // needs 4 blocks
  EXPECT_EQ(kv.free_blocks(), 3);
  EXPECT_EQ(kv.Table(1), nullptr);
  ASSERT_NE(kv.AllocateSlots(2, 0, 8), nullptr);
  EXPECT_EQ(kv.AllocateSlots(2, 8, 8), nullptr);  // would need 2 more, 1 free
  EXPECT_EQ(kv.Table(2)->groups[0].size(), 2u);   // unchanged
}

// Window 8, blocks of 4: at 12 computed tokens the next token attends back to
// position 5, so block 0 (positions 0-3) is released.
TEST(KvCacheManager, SlidingWindowReleasesBlocksThatLeftTheWindow) {
  KvCacheManager kv({{Type::kSlidingWindow, 4, 8}}, 10);
  ASSERT_NE(kv.AllocateSlots(1, 0, 12), nullptr);
  EXPECT_EQ(kv.free_blocks(), 7);
  const BlockTable* t = kv.AllocateSlots(1, 12, 1);
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->groups[0][0], kNullBlock);
  EXPECT_EQ(t->groups[0].size(), 4u);  // positions 0-12 span 4 blocks, one released
  EXPECT_EQ(Live(t, 0), 3);
  EXPECT_EQ(kv.free_blocks(), 7);
  // Decoding on to 40 tokens never holds more than the window's blocks plus one.
  for (int64_t n = 13; n < 40; ++n) t = kv.AllocateSlots(1, n, 1);
  EXPECT_LE(Live(t, 0), 4);
  kv.Free(1);
  EXPECT_EQ(kv.free_blocks(), 10);
}

TEST(KvCacheManager, StateGroupHoldsOneBlockPerSequence) {
  KvCacheManager kv({{Type::kFull, 4, 0}, {Type::kState, 4, 0}}, 40);
  const BlockTable* t = kv.AllocateSlots(1, 0, 16);
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->groups[0].size(), 4u);
  EXPECT_EQ(t->groups[1].size(), 1u);
  t = kv.AllocateSlots(1, 16, 100);  // 116 tokens: 29 attention blocks, still one state block
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->groups[0].size(), 29u);
  EXPECT_EQ(t->groups[1].size(), 1u);
  EXPECT_EQ(kv.free_blocks(), 40 - 30);
}

TEST(KvCacheManager, PeakBlocksCountsTheWindowOnly) {
  KvCacheManager kv({{Type::kFull, 16, 0}, {Type::kSlidingWindow, 16, 128}, {Type::kState, 16, 0}}, 1000);
  // Full: ceil(1000/16) = 63; sliding: min(63, ceil((127 + 64) / 16) + 1 = 13); state: 1.
  EXPECT_EQ(kv.PeakBlocks(1000, 64), 63 + 13 + 1);
}

// PeakBlocks bounds what the manager really holds, and is reached when chunk
// and block boundaries fall worst: 128-token window, blocks of 16, chunks of
// 64 after a 14-token first chunk (at 142 computed tokens: blocks 0-12 minus
// none released = 13). Aligned chunks hold one block less.
int64_t MostSlidingBlocksHeld(int64_t first_chunk) {
  KvCacheManager kv({{Type::kSlidingWindow, 16, 128}}, 1000);
  int64_t most = 0;
  for (int64_t done = 0, chunk = first_chunk; done < 1000; done += chunk, chunk = 64) {
    EXPECT_NE(kv.AllocateSlots(1, done, std::min<int64_t>(chunk, 1000 - done)), nullptr);
    most = std::max(most, kv.num_blocks() - kv.free_blocks());
  }
  return most;
}

TEST(KvCacheManager, PeakBlocksIsTheMostAChunkedRequestHolds) {
  const KvGroupSpec sliding{Type::kSlidingWindow, 16, 128};
  EXPECT_EQ(sliding.PeakBlocks(1000, 64), 13);  // ceil((127 + 64) / 16) + 1
  EXPECT_EQ(MostSlidingBlocksHeld(14), 13);
  EXPECT_EQ(MostSlidingBlocksHeld(64), 12);
}

// What a request still has to take to reach a length: its peak less the
// blocks it holds (a sliding group's released slots not counted).
TEST(KvCacheManager, BlocksToReachIsThePeakLessWhatIsHeld) {
  KvCacheManager kv({{Type::kFull, 4, 0}, {Type::kSlidingWindow, 4, 8}}, 100);
  // Nothing held: full ceil(30/4) = 8; sliding min(8, ceil((7 + 4) / 4) + 1 = 4).
  EXPECT_EQ(kv.BlocksToReach(1, 30, 4), 8 + 4);
  ASSERT_NE(kv.AllocateSlots(1, 0, 12), nullptr);
  ASSERT_NE(kv.AllocateSlots(1, 12, 1), nullptr);  // 13 tokens: full 4 blocks; sliding 4 slots, the first released
  EXPECT_EQ(Live(kv.Table(1), 1), 3);
  EXPECT_EQ(kv.BlocksToReach(1, 30, 4), (8 - 4) + (4 - 3));
  EXPECT_EQ(kv.BlocksToReach(1, 8, 4), 0 + 0);  // already past it
}

// vLLM's capacity count (max_memory_usage_bytes) reserves a sliding group's
// window + chunk + 1 block even for a short request; the peak does not.
TEST(KvGroupSpec, ReservedBlocksAsVllmCountsThem) {
  const KvGroupSpec sliding{Type::kSlidingWindow, 16, 512};
  EXPECT_EQ(sliding.PeakBlocks(100, 2048), 7);                        // ceil(100 / 16)
  EXPECT_EQ(sliding.ReservedBlocks(100, 2048), 7 + 1);                // ceil(min(2559, 100) / 16) + 1
  EXPECT_EQ(sliding.ReservedBlocks(4096, 2048), 160 + 1);             // ceil(2559 / 16) + 1
  EXPECT_EQ(sliding.PeakBlocks(4096, 2048), 161);
  const KvGroupSpec full{Type::kFull, 16, 0}, state{Type::kState, 16, 0};
  EXPECT_EQ(ReservedBlocks({full, sliding, state}, 4096, 2048), 256 + 161 + 1);
}

std::vector<int32_t> Tokens(int n, int32_t first) {
  std::vector<int32_t> t(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) t[i] = first + i;
  return t;
}

// Request `id` computes all of `tokens`, caches its full blocks and finishes.
void ServeAndFinish(KvCacheManager& kv, RequestId id, const std::vector<int32_t>& tokens) {
  const int64_t n = static_cast<int64_t>(tokens.size());
  ASSERT_NE(kv.AllocateSlots(id, 0, n), nullptr);
  kv.CacheFullBlocks(id, tokens, n);
  kv.Free(id);
}

// Request 1 computes 10 tokens in blocks of 4: two full blocks become
// shareable. Request 2 with the same first 9 tokens finds both; request 3,
// which differs in its 6th token, finds the first only.
TEST(KvCacheManager, PrefixCachingSharesWholeBlocksOfTheSamePrefix) {
  KvCacheManager kv({{Type::kFull, 4, 0}}, 10, /*prefix_caching=*/true);
  ASSERT_TRUE(kv.prefix_caching());
  const auto a = Tokens(10, 100);
  const BlockTable* t1 = kv.AllocateSlots(1, 0, 10);
  ASSERT_NE(t1, nullptr);
  kv.CacheFullBlocks(1, a, 10);
  EXPECT_EQ(kv.cached_blocks(), 2);
  auto b = Tokens(12, 100);
  EXPECT_EQ(kv.AcquireCachedPrefix(2, b), 8);
  EXPECT_EQ(kv.Table(2)->groups[0][0], t1->groups[0][0]);
  EXPECT_EQ(kv.Table(2)->groups[0][1], t1->groups[0][1]);
  const BlockTable* t2 = kv.AllocateSlots(2, 8, 4);
  ASSERT_NE(t2, nullptr);
  EXPECT_EQ(t2->groups[0].size(), 3u);
  EXPECT_EQ(kv.free_blocks(), 10 - 3 - 1);  // 3 blocks of request 1, 1 new
  auto c = a;
  c[5] = 7;
  EXPECT_EQ(kv.AcquireCachedPrefix(3, c), 4);
  kv.Free(3);
  kv.Free(2);
  kv.Free(1);
  EXPECT_EQ(kv.free_blocks(), 10);
}

// At least one token is left to compute, so a prompt of exactly two cached
// blocks reuses one of them.
TEST(KvCacheManager, PrefixCachingLeavesTheLastTokenToCompute) {
  KvCacheManager kv({{Type::kFull, 4, 0}}, 4, true);
  const auto a = Tokens(8, 100);
  ServeAndFinish(kv, 1, a);
  EXPECT_EQ(kv.AcquireCachedPrefix(2, a), 4);
}

// A finished request's blocks stay findable until the free queue hands them
// out again: the pool is then reused least recently freed first.
TEST(KvCacheManager, CachedBlocksAreEvictedOnlyWhenTheSpaceIsNeeded) {
  KvCacheManager kv({{Type::kFull, 4, 0}}, 4, true);
  const auto a = Tokens(9, 100);
  ServeAndFinish(kv, 1, a);
  EXPECT_EQ(kv.free_blocks(), 4);
  EXPECT_EQ(kv.AcquireCachedPrefix(2, a), 8);  // still there
  kv.Free(2);
  ASSERT_NE(kv.AllocateSlots(3, 0, 16), nullptr);  // takes all four blocks
  kv.Free(3);
  EXPECT_EQ(kv.cached_blocks(), 0);
  EXPECT_EQ(kv.AcquireCachedPrefix(4, a), 0);
}

TEST(KvCacheManager, PrefixCachingIsOffWithRecurrentStateOrWhenNotAsked) {
  KvCacheManager state({{Type::kFull, 4, 0}, {Type::kState, 4, 0}}, 10, true);
  EXPECT_FALSE(state.prefix_caching());
  KvCacheManager off({{Type::kFull, 4, 0}}, 10);
  const auto a = Tokens(9, 100);
  ServeAndFinish(off, 1, a);
  EXPECT_EQ(off.AcquireCachedPrefix(2, a), 0);
}

// Blocks of 4, a window of 8 (a new token attends 2 blocks back: vLLM's
// cdiv(8 - 1, 4)). Request 1 computes 17 tokens in three steps; the third
// step releases its first two sliding blocks (tokens 0-7 left the window).
// Request 2 with the same prompt finds 16 tokens: every full-attention block
// and, in the sliding group, only the last window's two, the slots before it
// left empty as in vLLM.
TEST(KvCacheManager, SlidingWindowGroupsNeedOnlyTheLastWindowCached) {
  KvCacheManager kv({{Type::kFull, 4, 0}, {Type::kSlidingWindow, 4, 8}}, 10, true);
  ASSERT_TRUE(kv.prefix_caching());
  const auto a = Tokens(17, 100);
  for (auto [from, n] : {std::pair{0, 8}, {8, 8}, {16, 1}}) {
    ASSERT_NE(kv.AllocateSlots(1, from, n), nullptr);
    kv.CacheFullBlocks(1, a, from + n);
  }
  const std::vector<int32_t> full1 = kv.Table(1)->groups[0], sliding1 = kv.Table(1)->groups[1];
  EXPECT_EQ(sliding1[0], kNullBlock);
  kv.Free(1);
  EXPECT_EQ(kv.AcquireCachedPrefix(2, a), 16);
  const BlockTable* t = kv.Table(2);
  EXPECT_EQ(t->groups[0], std::vector<int32_t>(full1.begin(), full1.begin() + 4));
  EXPECT_EQ(t->groups[1], (std::vector<int32_t>{kNullBlock, kNullBlock, sliding1[2], sliding1[3]}));
  EXPECT_EQ(kv.free_blocks(), 10 - 6);
  ASSERT_NE(kv.AllocateSlots(2, 16, 1), nullptr);  // the last token: one new block per group
  kv.Free(2);
  EXPECT_EQ(kv.free_blocks(), 10);
}

// A prefix whose full-attention blocks are all cached is no hit when the
// sliding group's blocks at its end were handed to someone else.
TEST(KvCacheManager, SlidingWindowBlocksLostShortenTheHit) {
  KvCacheManager kv({{Type::kFull, 4, 0}, {Type::kSlidingWindow, 4, 8}}, 10, true);
  const auto a = Tokens(17, 100);
  for (auto [from, n] : {std::pair{0, 8}, {8, 8}, {16, 1}}) {
    ASSERT_NE(kv.AllocateSlots(1, from, n), nullptr);
    kv.CacheFullBlocks(1, a, from + n);
  }
  kv.Free(1);
  EXPECT_EQ(kv.cached_blocks(), 8);  // 4 whole blocks per group
  // The sliding blocks 0 and 1 were released first (when they left the
  // window), so they lead the free queue: a new request takes them.
  ASSERT_NE(kv.AllocateSlots(3, 0, 4), nullptr);
  EXPECT_EQ(kv.cached_blocks(), 6);
  // The prefix of 8 tokens (+1 to compute) ends where the sliding group has
  // nothing left; the whole prompt's last window is still there.
  const std::vector<int32_t> b(a.begin(), a.begin() + 9);
  EXPECT_EQ(kv.AcquireCachedPrefix(4, b), 0);
  EXPECT_EQ(kv.AcquireCachedPrefix(5, a), 16);
}

}  // namespace
}  // namespace goodput
