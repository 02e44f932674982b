#include "core/stats.h"

#include <gtest/gtest.h>

namespace goodput {
namespace {

// Hand-computed with rank r = p/100 * (n - 1) and linear interpolation.
TEST(Percentile, LinearInterpolationBetweenClosestRanks) {
  EXPECT_DOUBLE_EQ(*Percentile({1, 2, 3, 4}, 50), 2.5);              // r = 1.5
  EXPECT_DOUBLE_EQ(*Percentile({15, 20, 35, 40, 50}, 40), 29.0);     // r = 1.6: 20 + 0.6 * 15
  EXPECT_DOUBLE_EQ(*Percentile({50, 10, 40, 20, 30}, 99), 49.6);     // unsorted input; r = 3.96
  EXPECT_DOUBLE_EQ(*Percentile({3, 1, 2}, 0), 1.0);
  EXPECT_DOUBLE_EQ(*Percentile({3, 1, 2}, 100), 3.0);
  EXPECT_DOUBLE_EQ(*Percentile({7}, 99), 7.0);
}

TEST(Percentile, EmptySampleHasNoValue) {
  EXPECT_FALSE(Percentile({}, 50).has_value());
  EXPECT_FALSE(Mean({}).has_value());
}

TEST(Percentiles, SeveralAtOnceMatchOneByOne) {
  std::vector<double> v = {9, 1, 8, 2, 7, 3, 6, 4, 5, 10};
  auto ps = Percentiles(v, {50, 90, 99});
  EXPECT_DOUBLE_EQ(*ps[0], *Percentile(v, 50));
  EXPECT_DOUBLE_EQ(*ps[1], 9.1);   // r = 8.1
  EXPECT_DOUBLE_EQ(*ps[2], 9.91);  // r = 8.91
  EXPECT_DOUBLE_EQ(*Mean(v), 5.5);
  EXPECT_DOUBLE_EQ(*Median(v), 5.5);
}

}  // namespace
}  // namespace goodput

namespace goodput {
namespace {

// Standard normal table values.
TEST(NormalQuantile, MatchesTables) {
  EXPECT_NEAR(NormalQuantile(0.5), 0.0, 1e-9);
  EXPECT_NEAR(NormalQuantile(0.975), 1.959964, 1e-6);
  EXPECT_NEAR(NormalQuantile(0.99), 2.326348, 1e-6);
  EXPECT_NEAR(NormalQuantile(0.01), -2.326348, 1e-6);
}

}  // namespace
}  // namespace goodput
