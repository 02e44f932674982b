#include "core/text.h"

#include <gtest/gtest.h>

namespace goodput {
namespace {

TEST(Text, SplitTrimsEachPiece) {
  EXPECT_EQ(Split(" a , b ,", ','), (std::vector<std::string>{"a", "b", ""}));
  EXPECT_EQ(Split("", ','), (std::vector<std::string>{""}));
}

// The whole text or nothing: the shard, port and tune-space parsers rely on
// a number past int64 or a trailing character being refused, not truncated.
TEST(Text, WholeNumberIsAllOfTheText) {
  EXPECT_EQ(ParseWholeNumber("42"), 42);
  EXPECT_EQ(ParseWholeNumber("-3"), -3);
  EXPECT_EQ(ParseWholeNumber("9223372036854775807"), INT64_MAX);
  for (const char* bad : {"", "+1", " 1", "1 ", "1x", "1.5", "9223372036854775808", "-", "0x10"}) {
    EXPECT_FALSE(ParseWholeNumber(bad).has_value()) << bad;
  }
}

}  // namespace
}  // namespace goodput
