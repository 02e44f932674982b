#include "tune/space.h"

#include <gtest/gtest.h>

namespace goodput {
namespace {

using Values = std::vector<std::string>;

TEST(SearchSpace, RangesAndListsExpandAsDocumented) {
  auto s = ParseSearchSpace(
      "max-num-seqs=8..512, --max-num-batched-tokens=500..4096, gpu-memory-utilization=0.80..0.95, "
      "kv-cache-memory=256MiB..2GiB, kv-cache-dtype=auto|fp8, num-speculative-tokens=0|2|4");
  ASSERT_TRUE(s.ok()) << s.status().message();
  ASSERT_EQ(s->dimensions.size(), 6u);
  EXPECT_EQ(s->dimensions[0].values, (Values{"8", "16", "32", "64", "128", "256", "512"}));
  EXPECT_TRUE(s->dimensions[0].ordered);
  EXPECT_EQ(s->dimensions[1].flag, "max-num-batched-tokens");
  EXPECT_EQ(s->dimensions[1].values, (Values{"500", "512", "1024", "2048", "4096"}));
  EXPECT_EQ(s->dimensions[2].values, (Values{"0.8", "0.85", "0.9", "0.95"}));
  EXPECT_EQ(s->dimensions[3].values, (Values{"256MiB", "512MiB", "1GiB", "2GiB"}));
  EXPECT_EQ(s->dimensions[4].values, (Values{"auto", "fp8"}));
  EXPECT_FALSE(s->dimensions[4].ordered);
  EXPECT_EQ(s->dimensions[5].values, (Values{"0", "2", "4"}));
  EXPECT_EQ(s->GridSize(), 7 * 5 * 4 * 4 * 2 * 3);
  EXPECT_EQ(s->At({1, 0, 0, 0, 1, 2}).Label(),
            "max-num-seqs=16, max-num-batched-tokens=500, gpu-memory-utilization=0.8, kv-cache-memory=256MiB, "
            "kv-cache-dtype=fp8, num-speculative-tokens=4");
  EXPECT_EQ(s->Describe().substr(0, 33), "max-num-seqs (7 values: 8..512), ");
}

TEST(SearchSpace, ASingleValueRangeIsOneValueAndAHugeOneStopsDoubling) {
  auto s = ParseSearchSpace("max-num-seqs=16..16");
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->dimensions[0].values, (Values{"16"}));
  s = ParseSearchSpace("max-num-seqs=1..9223372036854775807");
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->dimensions[0].values.size(), 64u);  // 2^0 .. 2^62, then the upper end
  EXPECT_EQ(s->dimensions[0].values.back(), "9223372036854775807");
}

TEST(SearchSpace, BrokenSpacesAreErrorsThatSayWhat) {
  const std::pair<std::string, std::string> cases[] = {
      {"", "no flag to search"},
      {"max-num-seqs", "must look like FLAG=LOW..HIGH"},
      {"=8..16", "empty flag or value"},
      {"max-num-seqs=", "empty flag or value"},
      {"max-num-seqs=8..4", "at least as large"},
      {"max-num-seqs=0..64", "cannot start at 0"},
      {"max-num-seqs=-4..64", "at least as large"},
      {"max-num-seqs=eight..64", "whole numbers, decimals or sizes"},
      {"gpu-memory-utilization=0.95..0.8", "upper end is below"},
      {"kv-cache-memory=2GiB..1GiB", "upper end is below"},
      {"kv-cache-dtype=auto||fp8", "empty value"},
      {"max-num-seqs=8..16, max-num-seqs=4|8", "given twice"},
      {"a=1|2,b=1|2,c=1|2,d=1|2,e=1|2,f=1|2,g=1|2,h=1|2,i=1|2,j=1|2,k=1|2,l=1|2,m=1|2", "more than 12"},
      {"max-num-seqs=" +
           [] {
             std::string v = "0";
             for (int i = 1; i <= 64; ++i) v += "|" + std::to_string(i);
             return v;
           }(),
       "65 values; at most 64"},
      {std::string(5000, 'x'), "at most 4096"},
  };
  for (const auto& [text, says] : cases) {
    auto s = ParseSearchSpace(text);
    ASSERT_FALSE(s.ok()) << text;
    EXPECT_NE(s.status().message().find(says), std::string::npos) << text << ": " << s.status().message();
  }
}

}  // namespace
}  // namespace goodput
