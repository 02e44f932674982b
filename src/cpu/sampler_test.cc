#include "cpu/sampler.h"

#include <cmath>

#include <gtest/gtest.h>

namespace goodput::cpu {
namespace {

// By hand: logits {1, 2, 3}; log Z = 3 + log(1 + e^-1 + e^-2) = 3.407606.
TEST(LogprobOf, TheLogSoftmaxAndTheMostLikely) {
  const std::vector<float> logits = {1, 2, 3};
  const double log_z = 3 + std::log(1 + std::exp(-1.0) + std::exp(-2.0));
  const TokenLogprob lp = LogprobOf(logits, 1, 2);
  EXPECT_NEAR(lp.logprob, 2 - log_z, 1e-6);
  ASSERT_EQ(lp.top.size(), 2u);
  EXPECT_EQ(lp.top[0].first, 2);
  EXPECT_NEAR(lp.top[0].second, 3 - log_z, 1e-6);
  EXPECT_EQ(lp.top[1].first, 1);
  EXPECT_TRUE(LogprobOf(logits, 0, 0).top.empty());
  EXPECT_EQ(LogprobOf(logits, 0, 99).top.size(), 3u);  // no more than the vocabulary
  // Large logits do not overflow: the max is taken out first.
  EXPECT_NEAR(LogprobOf({1000, 1000}, 0, 0).logprob, std::log(0.5), 1e-6);
}

// Greedy sampling picks the first maximum; its logprob is the largest.
TEST(SampleToken, GreedyPicksTheFirstMaximum) {
  std::vector<float> logits = {0.5f, 2.0f, 2.0f, -1.0f};
  std::mt19937_64 rng(1);
  SamplingParams p;
  EXPECT_EQ(SampleToken(logits, p, rng), 1);
}

}  // namespace
}  // namespace goodput::cpu
