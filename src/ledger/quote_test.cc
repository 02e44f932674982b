#include "ledger/quote.h"

#include <gtest/gtest.h>

namespace goodput {
namespace {

PointResult Point(int concurrency, int repeats, double spread) {
  PointResult p;
  p.load.concurrency = concurrency;
  p.repeats = repeats;
  p.throughput_spread = spread;
  return p;
}

TEST(Quote, ACleanPointIsQuotable) {
  const Quotability q = JudgePoint(Point(32, 5, 0.04), 100);
  EXPECT_TRUE(q.quotable);
  EXPECT_EQ(q.Text(), "quotable");
}

TEST(Quote, EveryRuleNamesItsReason) {
  EXPECT_EQ(JudgePoint(Point(32, 1, 0), 100).Text(), "not quotable: 1 repetition(s), fewer than 3");
  EXPECT_EQ(JudgePoint(Point(32, 5, 0.25), 100).Text(), "not quotable: throughput spread 25.0% > 10%");
  PointResult failing = Point(32, 5, 0.02);
  failing.failed = 3;  // 3 of 100 requests
  EXPECT_EQ(JudgePoint(failing, 100).Text(), "not quotable: 3.0% of requests failed > 1%");
  PointResult late = Point(32, 5, 0.02);
  late.send_lag_p99 = 0.05;
  EXPECT_EQ(JudgePoint(late, 100).Text(), "not quotable: client send lag p99 50.0 ms > 10.0 ms");
  PointResult busy = Point(32, 5, 0.02);
  busy.host_others_share = 0.38;
  EXPECT_EQ(JudgePoint(busy, 100).Text(),
            "not quotable: measured on a busy host: other processes took 38% of its CPU time (> 10%)");
  busy.host_others_share = 0.03;  // a quiet host's daemons
  EXPECT_TRUE(JudgePoint(busy, 100).quotable);
  PointResult over = Point(32, 5, 0.02);
  over.saturation = Saturation{true, 40, 0.31, 27.6, 0.71};
  EXPECT_EQ(JudgePoint(over, 100).Text(),
            "not quotable: not sustainable: 31% of the 40 requests/s offered were served (in a window as long, one "
            "median latency later), the backlog grew by 27.60 requests/s, TTFT rose 0.71 s per second of the run");
}

// The source: low-concurrency points with high variance are not quoted, even
// when the same spread would pass at high concurrency.
TEST(Quote, LowConcurrencyNeedsTighterAgreement) {
  EXPECT_TRUE(JudgePoint(Point(64, 5, 0.08), 100).quotable);
  const Quotability low = JudgePoint(Point(2, 5, 0.08), 100);
  EXPECT_FALSE(low.quotable);
  ASSERT_EQ(low.reasons.size(), 1u);
  EXPECT_NE(low.reasons[0].find("low concurrency (2)"), std::string::npos);
  EXPECT_TRUE(JudgePoint(Point(2, 5, 0.03), 100).quotable);
}

}  // namespace
}  // namespace goodput
