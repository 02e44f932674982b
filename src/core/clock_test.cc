#include "core/clock.h"

#include <gtest/gtest.h>

namespace goodput {
namespace {

// By hand: 2026-12-04T06:00:00Z is 20,791 days and 6 hours after the epoch.
TEST(ParseWallTime, UnixSecondsOrUtcIso8601) {
  EXPECT_DOUBLE_EQ(ParseWallTime("1796364000.5").value(), 1796364000.5);
  EXPECT_DOUBLE_EQ(ParseWallTime("2026-12-04T06:00:00Z").value(), 20791.0 * 86400 + 6 * 3600);
  EXPECT_DOUBLE_EQ(ParseWallTime("2026-12-04T06:00:00.25Z").value(), 20791.0 * 86400 + 6 * 3600 + 0.25);
  for (const char* bad :
       {"", "soon", "2026-12-04 06:00:00", "2026-12-04T06:00:00", "2026-12-04T06:00:00+01:00", "-5", "12abc"}) {
    auto t = ParseWallTime(bad);
    ASSERT_FALSE(t.ok()) << bad;
    EXPECT_NE(t.status().message().find("is not a time"), std::string::npos) << bad;
  }
}

}  // namespace
}  // namespace goodput
