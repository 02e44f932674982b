#include "core/stats.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

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

// Against a full sort (the plain reference): every asked rank holds the
// sorted value, with many ties (a simulated step's time is many requests'
// inter-token latency), at the ends, and with every index asked.
TEST(SelectRanks, PutsTheAskedOrderStatisticsWhereASortWould) {
  std::vector<double> v;
  uint64_t x = 12345;
  for (int i = 0; i < 10000; ++i) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    v.push_back(static_cast<double>((x >> 33) % 97));  // ties
  }
  std::vector<double> sorted = v;
  std::sort(sorted.begin(), sorted.end());
  const std::vector<size_t> ranks = {0, 1, 123, 4999, 5000, 5000, 9990, 9999};
  std::vector<double> selected = v;
  SelectRanks(selected, ranks);
  for (size_t r : ranks) EXPECT_EQ(selected[r], sorted[r]) << r;
  std::vector<size_t> all(v.size());
  for (size_t i = 0; i < all.size(); ++i) all[i] = i;
  SelectRanks(v, all);
  EXPECT_EQ(v, sorted);
  std::vector<double> none = {3, 1, 2};
  SelectRanks(none, {});
  EXPECT_EQ(none, (std::vector<double>{3, 1, 2}));
}

// The indices the two readers name are the ones they read: a sample ordered
// at those alone gives the full sort's percentile and interval.
TEST(SelectRanks, PercentileAndIntervalReadOnlyTheirIndices) {
  std::vector<double> v;
  for (int i = 0; i < 1001; ++i) v.push_back(static_cast<double>((i * 7919) % 1001) / 10.0);
  std::vector<double> sorted = v;
  std::sort(sorted.begin(), sorted.end());
  for (double p : {0.0, 12.5, 50.0, 99.0, 99.9, 100.0}) {
    std::vector<double> w = v;
    const auto [lo, hi] = PercentileIndices(w.size(), p);
    std::vector<size_t> ranks = {lo, hi};
    for (size_t i : PercentileIntervalIndices(w.size(), p)) ranks.push_back(i);
    SelectRanks(w, ranks);
    EXPECT_DOUBLE_EQ(PercentileOfSorted(w, p), PercentileOfSorted(sorted, p)) << p;
    const Interval a = PercentileIntervalOfSorted(w, p), b = PercentileIntervalOfSorted(sorted, p);
    EXPECT_EQ(a.lower, b.lower) << p;
    EXPECT_EQ(a.upper, b.upper) << p;
  }
  EXPECT_TRUE(PercentileIntervalIndices(10, 99).size() < 2);  // ten values cannot bound a p99 from above
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


// Published 95% Wilson intervals (Newcombe 1998, Table I: 0/10 -> 0-0.2775,
// 5/10 -> 0.2366-0.7634; 10/10 is the mirror of 0/10).
TEST(WilsonInterval, MatchesPublishedValues) {
  const Interval none = WilsonInterval(0, 10);
  EXPECT_NEAR(none.lower, 0.0, 1e-4);
  EXPECT_NEAR(none.upper, 0.2775, 1e-4);
  const Interval half = WilsonInterval(5, 10);
  EXPECT_NEAR(half.lower, 0.2366, 1e-4);
  EXPECT_NEAR(half.upper, 0.7634, 1e-4);
  const Interval all = WilsonInterval(10, 10);
  EXPECT_NEAR(all.lower, 0.7225, 1e-4);
  EXPECT_NEAR(all.upper, 1.0, 1e-12);
  const Interval empty = WilsonInterval(0, 0);
  EXPECT_EQ(empty.lower, 0);
  EXPECT_EQ(empty.upper, 1);
}

// n >= z^2 p / (1 - p), z = 1.95996: p99 -> 380.3 -> 381, p95 -> 72.99 -> 73,
// p90 -> 34.57 -> 35, p50 -> 3.84 -> 4; and the bound is tight: n - 1 all-good
// requests leave the lower bound below p.
TEST(MinTrialsToShow, IsComputedNotGuessed) {
  EXPECT_EQ(MinTrialsToShow(0.99), 381);
  EXPECT_EQ(MinTrialsToShow(0.95), 73);
  EXPECT_EQ(MinTrialsToShow(0.90), 35);
  EXPECT_EQ(MinTrialsToShow(0.50), 4);
  EXPECT_EQ(MinTrialsToShow(1.0), INT64_MAX);
  for (double p : {0.5, 0.9, 0.95, 0.99, 0.999}) {
    const int64_t n = MinTrialsToShow(p);
    EXPECT_GE(WilsonInterval(n, n).lower, p) << p;
    EXPECT_LT(WilsonInterval(n - 1, n - 1).lower, p) << p;
  }
}

// Conover's table (n = 100, median, 95%): the 40th and 61st values. The exact
// coverage P(40 <= B <= 60), B ~ Bin(100, 1/2), is 0.9648.
TEST(PercentileInterval, MedianOfAHundredMatchesConover) {
  std::vector<double> v;
  for (int i = 100; i >= 1; --i) v.push_back(i);  // unsorted on purpose
  const Interval i = PercentileInterval(v, 50);
  EXPECT_EQ(i.lower, 40);
  EXPECT_EQ(i.upper, 61);
}

// 128 samples put P(every one below the p99) = 0.99^128 = 0.28: no rank
// bounds the p99 from above at 95%. 1,000 samples do.
TEST(PercentileInterval, SmallSamplesCannotBoundATailPercentile) {
  std::vector<double> v(128);
  for (int i = 0; i < 128; ++i) v[i] = i;
  const Interval small = PercentileInterval(v, 99);
  EXPECT_TRUE(std::isinf(small.upper) && small.upper > 0);
  EXPECT_GE(small.lower, 120);
  v.resize(1000);
  for (int i = 0; i < 1000; ++i) v[i] = i;
  const Interval big = PercentileInterval(v, 99);
  EXPECT_TRUE(std::isfinite(big.upper));
  EXPECT_LT(big.lower, 989);  // rank 990 is the point estimate's neighbourhood
  EXPECT_GT(big.upper, 989);
  EXPECT_TRUE(std::isinf(PercentileInterval({}, 50).lower));
  EXPECT_TRUE(std::isinf(PercentileInterval(v, 100).upper));  // no rank bounds a maximum
  EXPECT_TRUE(std::isinf(PercentileInterval(v, 0).lower));
}

// By hand: 0.99^367 = 0.02501 > 0.025 >= 0.99^368 = 0.02476; 0.5^5 = 0.031,
// 0.5^6 = 0.016. The interval itself agrees at the edge.
TEST(MinSampleToBoundPercentile, IsWherePercentileIntervalCloses) {
  EXPECT_EQ(MinSampleToBoundPercentile(99), 368);
  EXPECT_EQ(MinSampleToBoundPercentile(1), 368);
  EXPECT_EQ(MinSampleToBoundPercentile(50), 6);
  EXPECT_EQ(MinSampleToBoundPercentile(100), INT64_MAX);
  for (double p : {50.0, 90.0, 99.0}) {
    const int64_t n = MinSampleToBoundPercentile(p);
    std::vector<double> v(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = static_cast<double>(i);
    const Interval at = PercentileInterval(v, p);
    EXPECT_TRUE(std::isfinite(at.lower) && std::isfinite(at.upper)) << p;
    v.pop_back();
    const Interval below = PercentileInterval(v, p);
    EXPECT_FALSE(std::isfinite(below.lower) && std::isfinite(below.upper)) << p;
  }
}

}  // namespace
}  // namespace goodput
