#include "engine/block_pool.h"

#include <gtest/gtest.h>

namespace goodput {
namespace {

TEST(BlockPool, HandsOutTheLeastRecentlyFreedBlockFirst) {
  BlockPool pool(3, 1);
  EXPECT_EQ(pool.free(), 3);
  const int32_t a = pool.Take(), b = pool.Take(), c = pool.Take();
  EXPECT_EQ(pool.free(), 0);
  pool.Release(b);
  pool.Release(a);
  pool.Release(c);
  EXPECT_EQ(pool.Take(), b);
  EXPECT_EQ(pool.Take(), a);
  EXPECT_EQ(pool.Take(), c);
}

TEST(BlockPool, AFreedBlockKeepsItsPrefixUntilTakenAgain) {
  BlockPool pool(2, 1);
  const int32_t a = pool.Take();
  pool.Remember(0, 42, a);
  pool.Release(a);
  EXPECT_EQ(pool.free(), 2);
  EXPECT_EQ(pool.Cached(0, 42), a);  // free, and still findable
  pool.Share(a);                     // a hit takes it out of the free queue
  EXPECT_EQ(pool.free(), 1);
  pool.Release(a);
  const int32_t other = pool.Take();  // the block freed earlier goes first
  EXPECT_NE(other, a);
  EXPECT_EQ(pool.Cached(0, 42), a);
  EXPECT_EQ(pool.Take(), a);          // now reused: its prefix is forgotten
  EXPECT_EQ(pool.Cached(0, 42), -1);
  EXPECT_EQ(pool.cached_blocks(), 0);
}

TEST(BlockPool, ASharedBlockIsFreeOnlyWhenItsLastHolderLetsGo) {
  BlockPool pool(2, 1);
  const int32_t a = pool.Take();
  pool.Share(a);
  pool.Release(a);
  EXPECT_EQ(pool.free(), 1);
  pool.Release(a);
  EXPECT_EQ(pool.free(), 2);
}

TEST(BlockPool, TheFirstCopyOfAPrefixStaysTheCachedOne) {
  BlockPool pool(2, 2);
  const int32_t a = pool.Take(), b = pool.Take();
  pool.Remember(0, 7, a);
  pool.Remember(0, 7, b);
  EXPECT_EQ(pool.Cached(0, 7), a);
  EXPECT_EQ(pool.Cached(1, 7), -1);  // groups keep their own maps
  EXPECT_EQ(pool.cached_blocks(), 1);
}

}  // namespace
}  // namespace goodput
