#include "ledger/quote.h"

#include <gtest/gtest.h>

#include <algorithm>

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

// A class with an SLO measured on fewer requests than its percentile needs
// (ClassAttainment::min_requests: 35 for a p90 at 95%) cannot be quoted.
TEST(Quote, EveryClassNeedsTheRequestsItsPercentileNeeds) {
  PointResult p = Point(32, 5, 0.02);
  ClassAttainment interactive, offline;
  interactive.class_name = "interactive", interactive.has_slo = true;
  interactive.total = 30, interactive.min_requests = 35;
  offline.class_name = "offline", offline.total = 3;  // no SLO: no percentile to show
  p.classes = {interactive, offline};
  EXPECT_EQ(JudgePoint(p, 100).Text(),
            "not quotable: class interactive: 30 measured requests, fewer than the 35 its SLO's percentile needs");
  p.classes[0].total = 35;
  EXPECT_TRUE(JudgePoint(p, 100).quotable);
}

// Every rule of the table is checked for every point, passed or not, in the
// table's order, and the table states the thresholds the rules hold.
TEST(Quote, EachPointCarriesEveryRulesOutcome) {
  PointResult p = Point(2, 1, 0.03);
  p.host_others_share = 0.02;
  const Quotability q = JudgePoint(p, 100);
  const std::vector<QuoteRule> table = QuoteRuleTable();
  ASSERT_EQ(q.checks.size(), table.size());
  for (size_t i = 0; i < table.size(); ++i) EXPECT_EQ(q.checks[i].rule, table[i].name);
  EXPECT_FALSE(q.checks[1].passed);  // 1 repetition
  EXPECT_EQ(q.checks[1].detail, "1 repetition(s), fewer than 3");
  EXPECT_TRUE(q.checks[3].passed);  // low concurrency, 3% <= 5%
  EXPECT_EQ(q.checks[3].detail, "low concurrency (2) with spread 3.0% <= 5%");
  EXPECT_EQ(q.checks[7].detail, "other processes took 2% of the host's CPU");
  EXPECT_EQ(q.reasons, std::vector<std::string>{"1 repetition(s), fewer than 3"});
  QuoteRules strict;
  strict.min_repeats = 5, strict.max_spread = 0.08;
  const std::string md = QuoteRuleMarkdown(strict);
  EXPECT_NE(md.find("| repetitions | >= 5 |"), std::string::npos) << md;
  EXPECT_NE(md.find("| spread | throughput (max - min) / median <= 8% |"), std::string::npos) << md;
  EXPECT_EQ(std::count(md.begin(), md.end(), '\n'), 2 + static_cast<long>(table.size()));
}

}  // namespace
}  // namespace goodput
