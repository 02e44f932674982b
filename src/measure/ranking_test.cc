#include "measure/ranking.h"

#include <gtest/gtest.h>

namespace goodput {
namespace {

// A ladder of 1..32 clients that holds up to `capacity` (none when 0; every
// load without an SLO), with goodput and throughput at that load and the SLO
// margin there (and at every load, when none holds).
SweepResult Search(int capacity, double goodput, double throughput, double margin = 0.1, bool slo = true) {
  SweepResult s;
  for (int c : {1, 2, 4, 8, 16, 32}) {
    PointResult p;
    p.load = ArrivalSpec{ArrivalKind::kClosedLoop, c, 1, 1};
    p.label = std::to_string(c);
    ClassAttainment a;
    a.has_slo = slo;
    a.verdict = !slo || c <= capacity ? Verdict::kHolds : Verdict::kFails;
    p.classes.push_back(a);
    p.verdict = a.verdict;
    p.goodput = c == capacity ? goodput : 0.5 * goodput;
    p.throughput = c == capacity ? throughput : 0.5 * throughput;
    p.slo_margin = c <= capacity || capacity == 0 ? margin : -0.5;
    s.points.push_back(p);
  }
  s.capacity = LadderCapacity(s.points);
  return s;
}

// The case: max-num-seqs=8 holds to 4 clients and max-num-seqs=4
// to 16, with goodput that rounds to the same figure: capacity decides.
TEST(Ranking, CapacityDecidesBeforeGoodput) {
  const std::vector<SettingScore> scores = {ScoreSweep(Search(4, 0.071, 50)), ScoreSweep(Search(16, 0.070, 51))};
  const Ranking r = RankScores(scores);
  EXPECT_EQ(r.order, (std::vector<size_t>{1, 0}));
  EXPECT_EQ(r.above_next[0], RankCriterion::kCapacity);
  EXPECT_EQ(*scores[1].capacity, 16);
}

// Same capacity: goodput decides when it differs by more than 2%; within
// 2% the SLO margin decides, then the memory left unallocated, then the
// fewer flags changed; and a full tie keeps the given order.
TEST(Ranking, TieBreakersInTheirOrder) {
  auto score = [](double goodput, double margin, std::optional<int64_t> headroom, int changed) {
    return ScoreSweep(Search(8, goodput, 100, margin), headroom, changed);
  };
  auto first = [](std::vector<SettingScore> s) { return RankScores(s); };
  Ranking r = first({score(2.0, 0.1, 1, 0), score(2.1, 0.1, 1, 0)});
  EXPECT_EQ(r.order, (std::vector<size_t>{1, 0}));
  EXPECT_EQ(r.above_next[0], RankCriterion::kGoodput);
  r = first({score(2.0, 0.10, 1, 0), score(2.01, 0.30, 1, 0)});
  EXPECT_EQ(r.order, (std::vector<size_t>{1, 0}));
  EXPECT_EQ(r.above_next[0], RankCriterion::kSloMargin);
  r = first({score(2.0, 0.10, int64_t{6} << 30, 0), score(2.0, 0.11, int64_t{8} << 30, 0)});
  EXPECT_EQ(r.order, (std::vector<size_t>{1, 0}));
  EXPECT_EQ(r.above_next[0], RankCriterion::kMemoryHeadroom);
  r = first({score(2.0, 0.10, 1, 2), score(2.0, 0.10, 1, 1)});
  EXPECT_EQ(r.order, (std::vector<size_t>{1, 0}));
  EXPECT_EQ(r.above_next[0], RankCriterion::kChangedFlags);
  r = first({score(2.0, 0.10, 1, 1), score(2.0, 0.10, 1, 1)});
  EXPECT_EQ(r.order, (std::vector<size_t>{0, 1}));
  EXPECT_EQ(r.above_next[0], RankCriterion::kTie);
}

// When nothing holds, the setting that came nearer at its lowest load ranks first,
// and any setting with a capacity ranks above both.
TEST(Ranking, NothingHoldingIsRankedByHowNearItCame) {
  const std::vector<SettingScore> scores = {ScoreSweep(Search(0, 0, 0, -0.4)), ScoreSweep(Search(0, 0, 0, -0.1)),
                                            ScoreSweep(Search(1, 0.5, 10))};
  const Ranking r = RankScores(scores);
  EXPECT_EQ(r.order, (std::vector<size_t>{2, 1, 0}));
  EXPECT_EQ(r.above_next[0], RankCriterion::kCapacity);
  EXPECT_EQ(r.above_next[1], RankCriterion::kSloMargin);
}

// An offline endpoint (no class has an SLO) ranks by the most any load served.
TEST(Ranking, WithoutAnSloTheServedThroughputRanks) {
  const std::vector<SettingScore> scores = {ScoreSweep(Search(32, 0, 800, 0, false)),
                                            ScoreSweep(Search(32, 0, 1200, 0, false))};
  EXPECT_FALSE(scores[0].judged);
  EXPECT_DOUBLE_EQ(scores[1].throughput, 1200);
  const Ranking r = RankScores(scores);
  EXPECT_EQ(r.order, (std::vector<size_t>{1, 0}));
  EXPECT_EQ(r.above_next[0], RankCriterion::kThroughput);
}

// Rates tie within the rate search's resolution (5%).
TEST(Ranking, RateCapacitiesWithinTheSearchResolutionTie) {
  auto at_rate = [](double rate, double goodput) {
    SweepResult s;
    PointResult p;
    p.load = ArrivalSpec{ArrivalKind::kPoisson, 1, rate, 1};
    ClassAttainment a;
    a.has_slo = true;
    p.classes.push_back(a);
    p.goodput = goodput;
    s.points.push_back(p);
    s.capacity = 0;
    return ScoreSweep(s);
  };
  const Ranking r = RankScores({at_rate(4.0, 3.5), at_rate(4.1, 3.2)});
  EXPECT_EQ(r.order, (std::vector<size_t>{0, 1}));
  EXPECT_EQ(r.above_next[0], RankCriterion::kGoodput);
}

}  // namespace
}  // namespace goodput
