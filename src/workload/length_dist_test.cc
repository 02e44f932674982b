#include "workload/length_dist.h"

#include <cmath>
#include <cstdio>

#include <gtest/gtest.h>

#include "support/temp_file.h"

namespace goodput {
namespace {

using testing::WriteTempFile;

TEST(Lengths, FileWithCommentsAndBlankLines) {
  auto d = LengthDistribution::FromFile(WriteTempFile("lens_ok.txt", "# observed\n100\n\n300 # long one\n200\n"));
  ASSERT_TRUE(d.ok()) << d.status().message();
  EXPECT_DOUBLE_EQ(d->Mean(), 200.0);
  EXPECT_EQ(d->Quantile(0.5), 200);
  EXPECT_EQ(d->Max(), 300);
  EXPECT_EQ(d->samples(), 3u);
}

TEST(Lengths, JunkLineIsNamedByNumber) {
  auto d = LengthDistribution::FromFile(WriteTempFile("lens_bad.txt", "100\n200\nabc\n"));
  ASSERT_FALSE(d.ok());
  EXPECT_NE(d.status().message().find(":3: 'abc'"), std::string::npos) << d.status().message();
  EXPECT_FALSE(LengthDistribution::FromFile(WriteTempFile("lens_neg.txt", "-5\n")).ok());
  EXPECT_FALSE(LengthDistribution::FromFile(WriteTempFile("lens_frac.txt", "1.5\n")).ok());
  EXPECT_FALSE(LengthDistribution::FromFile(WriteTempFile("lens_empty.txt", "# nothing\n")).ok());
  EXPECT_FALSE(LengthDistribution::FromFile("/nonexistent/lengths.txt").ok());
}

TEST(Lengths, FixedSpec) {
  auto d = LengthDistribution::FromSpec("fixed:8k");
  ASSERT_TRUE(d.ok());
  EXPECT_DOUBLE_EQ(d->Mean(), 8000.0);
  EXPECT_EQ(d->Quantile(0.99), 8000);
}

// The source's traffic: 7 in 10 requests up to 200k tokens, the rest 200k-500k.
// Uniform bins: mean = 0.7 * 100k + 0.3 * 350k = 175k; 70% at or below 200k.
TEST(Lengths, HistogramSpec) {
  auto d = LengthDistribution::FromSpec("0-200k:0.7,200k-500k:0.3");
  ASSERT_TRUE(d.ok()) << d.status().message();
  EXPECT_NEAR(d->Mean(), 0.7 * 100000.5 + 0.3 * 350000, 1e-6);
  EXPECT_LE(d->Quantile(0.69), 200000);
  EXPECT_GT(d->Quantile(0.71), 200000);
  EXPECT_LE(d->Max(), 500000);
  // Weights are normalised.
  auto scaled = LengthDistribution::FromSpec("0-200k:7,200k-500k:3");
  EXPECT_NEAR(scaled->Mean(), d->Mean(), 1e-6);
}

// Quantiles: half the mass on [1, 1000], half on [1000, 2000] -> mean ~1000.
TEST(Lengths, QuantileSpec) {
  auto d = LengthDistribution::FromSpec("p50=1000,p100=2000");
  ASSERT_TRUE(d.ok()) << d.status().message();
  EXPECT_DOUBLE_EQ(d->Mean(), 0.5 * 500.5 + 0.5 * 1500);
  EXPECT_EQ(d->Quantile(0.5), 1000);
  EXPECT_EQ(d->Quantile(0.75), 1500);
  EXPECT_EQ(d->Max(), 2000);
}

TEST(Lengths, BrokenSpecsSayWhy) {
  auto expect_error = [](const char* spec, const char* needle) {
    auto d = LengthDistribution::FromSpec(spec);
    ASSERT_FALSE(d.ok()) << spec;
    EXPECT_NE(d.status().message().find(needle), std::string::npos) << d.status().message();
  };
  expect_error("0-200k:abc", "weight: 'abc' is not a number");
  expect_error("200k-100k:1", "low < high");
  expect_error("0-200k:0", "sum to zero");
  expect_error("p50=2k", "must end at p100");
  expect_error("p50=8k,p90=2k,p100=9k", "must not decrease");
  expect_error("fixed:0", "at least 1");
  expect_error("banana", "must look like");
  expect_error("normal:1k", "needs two values");
  expect_error("normal:1k,-5", "spread must be positive");
  expect_error("lognormal:abc,0.5", "does not start with a number");
  expect_error("uniform:4k-1k", "low < high");
  expect_error("", "empty");
  // Beyond 16M tokens (2^24): a typo, not a context window; one clear error.
  expect_error("fixed:99999999999", "a length of 99999999999 tokens is over the limit of 16777216");
  expect_error("uniform:1k-17M", "over the limit of 16777216");
  expect_error("0-1k:0.5,1k-20000000:0.5", "over the limit");
  expect_error("lognormal:8M,2", "over the limit");
  EXPECT_TRUE(LengthDistribution::FromSpec("fixed:16M").ok());  // 2^24 itself is allowed
  EXPECT_FALSE(LengthDistribution::FromSpec("fixed:16777217").ok());
}

TEST(Lengths, FileOrSamplesBeyondTheLimitNameTheLength) {
  auto file = LengthDistribution::FromFile(WriteTempFile("lens_huge.txt", "100\n99999999999\n"));
  ASSERT_FALSE(file.ok());
  EXPECT_NE(file.status().message().find(":2: a length of 99999999999 tokens is over the limit"), std::string::npos)
      << file.status().message();
  auto samples = LengthDistribution::FromSamples({5, kMaxTokenLength + 1}, "observed");
  ASSERT_FALSE(samples.ok());
  EXPECT_NE(samples.status().message().find("observed: a length of 16777217 tokens"), std::string::npos)
      << samples.status().message();
  EXPECT_TRUE(LengthDistribution::FromSamples({5, kMaxTokenLength}, "observed").ok());
}

TEST(Lengths, CappedAtMaxModelLen) {
  auto d = LengthDistribution::FromSpec("fixed:10k");
  EXPECT_EQ(d->CappedAt(4096).Max(), 4096);
}

double SampleMean(const LengthDistribution& d, int n, double* sd) {
  std::mt19937_64 rng(42);
  double sum = 0, sq = 0;
  for (int i = 0; i < n; ++i) {
    const double v = static_cast<double>(d.Sample(rng));
    sum += v;
    sq += v * v;
  }
  const double mean = sum / n;
  if (sd) *sd = std::sqrt(sq / n - mean * mean);
  return mean;
}

TEST(Lengths, SamplingMatchesTheParameters) {
  double sd = 0;
  auto uniform = LengthDistribution::FromSpec("uniform:1k-4k");
  ASSERT_TRUE(uniform.ok());
  EXPECT_NEAR(SampleMean(*uniform, 40000, &sd), 2500, 25);
  EXPECT_NEAR(sd, 3000 / std::sqrt(12.0), 20);
  auto normal = LengthDistribution::FromSpec("normal:1k,200");
  ASSERT_TRUE(normal.ok());
  EXPECT_NEAR(SampleMean(*normal, 40000, &sd), 1000, 10);
  EXPECT_NEAR(sd, 200, 10);
  EXPECT_NEAR(normal->Mean(), 1000, 1);
  EXPECT_NEAR(static_cast<double>(normal->Quantile(0.975)), 1000 + 1.96 * 200, 3);
  auto lognormal = LengthDistribution::FromSpec("lognormal:1k,0.8");
  ASSERT_TRUE(lognormal.ok());
  EXPECT_NEAR(SampleMean(*lognormal, 40000, nullptr), 1000, 30);
  // Median of a lognormal = exp(mu) = mean * exp(-sigma^2 / 2).
  EXPECT_NEAR(static_cast<double>(lognormal->Quantile(0.5)), 1000 * std::exp(-0.32), 5);
}

TEST(Lengths, SameSeedSameLengths) {
  auto d = LengthDistribution::FromSpec("0-200k:0.7,200k-500k:0.3");
  std::mt19937_64 a(7), b(7);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(d->Sample(a), d->Sample(b));
}

}  // namespace
}  // namespace goodput
