#include "core/units.h"

#include <gtest/gtest.h>

namespace goodput {
namespace {

TEST(ParseDuration, UnitsUsersType) {
  EXPECT_DOUBLE_EQ(*ParseDuration("100ms"), 0.1);
  EXPECT_DOUBLE_EQ(*ParseDuration("1.5s"), 1.5);
  EXPECT_DOUBLE_EQ(*ParseDuration(" 250us "), 250e-6);
  EXPECT_DOUBLE_EQ(*ParseDuration("2min"), 120.0);
  EXPECT_DOUBLE_EQ(*ParseDuration("2m"), 120.0);
  EXPECT_DOUBLE_EQ(*ParseDuration("1h"), 3600.0);
  EXPECT_DOUBLE_EQ(*ParseDuration("0s"), 0.0);
}

TEST(ParseDuration, RejectsBareNumbersAndJunk) {
  auto bare = ParseDuration("100");
  ASSERT_FALSE(bare.ok());
  EXPECT_NE(bare.status().message().find("no unit"), std::string::npos);
  EXPECT_FALSE(ParseDuration("abc").ok());
  EXPECT_FALSE(ParseDuration("-1s").ok());
  EXPECT_FALSE(ParseDuration("5 parsecs").ok());
  EXPECT_FALSE(ParseDuration("").ok());
}

TEST(ParseBytes, DecimalAndBinaryUnits) {
  EXPECT_EQ(*ParseBytes("4GiB"), 4LL * 1024 * 1024 * 1024);
  EXPECT_EQ(*ParseBytes("80GB"), 80'000'000'000LL);
  EXPECT_EQ(*ParseBytes("512MiB"), 512LL * 1024 * 1024);
  EXPECT_EQ(*ParseBytes("1.5TB"), 1'500'000'000'000LL);
  EXPECT_EQ(*ParseBytes("4096"), 4096);
  EXPECT_EQ(*ParseBytes("4gib"), 4LL * 1024 * 1024 * 1024);
  EXPECT_EQ(*ParseBytes("51.38GiB"), 55168854917LL);  // 51.38 * 2^30, rounded
}

TEST(ParseBytes, RejectsZeroNegativeAndUnknownUnits) {
  EXPECT_FALSE(ParseBytes("0GB").ok());
  EXPECT_FALSE(ParseBytes("-1GB").ok());
  auto bad = ParseBytes("4XB");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("unknown unit"), std::string::npos);
  EXPECT_FALSE(ParseBytes("GB").ok());
}

TEST(ParseTokenCount, FollowsVllmSuffixConvention) {
  EXPECT_EQ(*ParseTokenCount("128k"), 128'000);
  EXPECT_EQ(*ParseTokenCount("128K"), 131'072);
  EXPECT_EQ(*ParseTokenCount("1m"), 1'000'000);
  EXPECT_EQ(*ParseTokenCount("1M"), 1'048'576);
  EXPECT_EQ(*ParseTokenCount("25.6k"), 25'600);
  EXPECT_EQ(*ParseTokenCount("4096"), 4096);
}

TEST(ParseTokenCount, RejectsFractionsZeroAndJunk) {
  EXPECT_FALSE(ParseTokenCount("1.5").ok());
  EXPECT_FALSE(ParseTokenCount("0").ok());
  EXPECT_FALSE(ParseTokenCount("12q").ok());
  EXPECT_FALSE(ParseTokenCount("k").ok());
}

TEST(Format, CountsAndGiB) {
  EXPECT_EQ(FormatCount(420864), "420,864");
  EXPECT_EQ(FormatCount(999), "999");
  EXPECT_EQ(FormatCount(-1000), "-1,000");
  EXPECT_EQ(FormatGiB(26304LL * 2 * 1024 * 1024), "51.38 GiB");
  EXPECT_EQ(FormatDuration(0.85), "850.0 ms");
  EXPECT_EQ(FormatDuration(1.5), "1.50 s");
}

TEST(ParseRate, SiPrefixesAndUnits) {
  EXPECT_DOUBLE_EQ(*ParseRate("3.35TB/s", "B/s"), 3.35e12);
  EXPECT_DOUBLE_EQ(*ParseRate("900 GB/s", "B/s"), 900e9);
  EXPECT_DOUBLE_EQ(*ParseRate("3.35e12", "B/s"), 3.35e12);
  EXPECT_DOUBLE_EQ(*ParseRate("989T", "FLOPS"), 989e12);
  EXPECT_DOUBLE_EQ(*ParseRate("989 tflops", "FLOPS"), 989e12);
  EXPECT_FALSE(ParseRate("fast", "B/s").ok());
  EXPECT_NE(ParseRate("3 XB/s", "B/s").status().message().find("unknown unit"), std::string::npos);
  EXPECT_FALSE(ParseRate("0 GB/s", "B/s").ok());
  EXPECT_FALSE(ParseRate("-1T", "FLOPS").ok());
}

}  // namespace
}  // namespace goodput
