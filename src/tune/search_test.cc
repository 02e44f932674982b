#include "tune/search.h"

#include <cmath>

#include <gtest/gtest.h>

namespace goodput {
namespace {

// A capacity search's result holding up to `capacity` clients.
SettingResult HoldsUpTo(int capacity) {
  SettingResult r;
  for (int c : {capacity, capacity + 1}) {
    PointResult p;
    p.load = ArrivalSpec{ArrivalKind::kClosedLoop, c, 1, 1};
    p.label = std::to_string(c);
    ClassAttainment a;
    a.has_slo = true;
    a.verdict = c == capacity ? Verdict::kHolds : Verdict::kFails;
    p.classes.push_back(a);
    p.verdict = a.verdict;
    p.goodput = 0.1 * c;
    r.sweep.points.push_back(p);
  }
  if (capacity > 0) r.sweep.capacity = 0;
  return r;
}

// A constructed objective with an interlock: the sequence cap `a` and the
// memory share `c` bound the capacity together (min(a, 64 c)), list value
// b=y is worth 25% more than x or z; a=64 with c=0.4 does not start.
// Screening sees the capacity one client low, as a coarse search may.
struct Constructed {
  int evaluations = 0;
  Result<Evaluation> operator()(const Setting& s, Fidelity f) {
    ++evaluations;
    const double a = std::stod(*s.Find("a")), c = std::stod(*s.Find("c"));
    Evaluation e;
    if (a == 64 && c > 0.35) {
      e.pruned = "the KV pool does not fit";
      return e;
    }
    int capacity = static_cast<int>(std::floor(std::min(a, 64 * c) * (*s.Find("b") == "y" ? 1 : 0.8)));
    if (f == Fidelity::kScreen) capacity = std::max(0, capacity - 1);
    e.result = HoldsUpTo(capacity);
    e.score = ScoreSweep(e.result.sweep);
    return e;
  }
};

const char* kSpace = "a=1..64, b=x|y|z, c=0.1..0.4";

TEST(SearchSettings, CoordinateDescentFindsAConstructedOptimumWithAnInterlock) {
  auto space = ParseSearchSpace(kSpace);
  ASSERT_TRUE(space.ok());
  ASSERT_EQ(space->GridSize(), 7 * 3 * 4);
  Constructed objective;
  SearchOptions o;
  o.budget = 60;
  auto r = SearchSettings(*space, std::ref(objective), o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_NE(r->method.find("coordinate descent"), std::string::npos) << r->method;
  ASSERT_FALSE(r->ranked.empty());
  const Evaluation& best = r->evaluations[r->ranked.front()];
  EXPECT_EQ(best.setting.Label(), "a=32, b=y, c=0.4");  // min(32, 25.6) = 25 clients
  EXPECT_EQ(*best.score.capacity, 25);
  EXPECT_EQ(best.fidelity, Fidelity::kFull);
  EXPECT_LT(objective.evaluations, 84);  // fewer than the grid
  EXPECT_FALSE(r->budget_spent);
  // Every ranked evaluation is a full one; the runner-up is below it by capacity.
  for (size_t i : r->ranked) EXPECT_EQ(r->evaluations[i].fidelity, Fidelity::kFull);
  EXPECT_EQ(r->above_next.front(), RankCriterion::kCapacity);
}

TEST(SearchSettings, ASmallGridIsMeasuredWholeAndPrunedSettingsSayWhy) {
  auto space = ParseSearchSpace(kSpace);
  Constructed objective;
  SearchOptions o;
  o.budget = 100;
  auto r = SearchSettings(*space, std::ref(objective), o);
  ASSERT_TRUE(r.ok());
  EXPECT_NE(r->method.find("every setting of the grid (84 settings"), std::string::npos) << r->method;
  EXPECT_EQ(r->evaluations.size(), 84u);
  int pruned = 0;
  for (const Evaluation& e : r->evaluations) {
    if (e.runs()) continue;
    ++pruned;
    EXPECT_EQ(e.pruned, "the KV pool does not fit");
  }
  EXPECT_EQ(pruned, 3);  // a=64, c=0.4 with each b
  EXPECT_EQ(r->ranked.size(), 81u);
  EXPECT_EQ(r->evaluations[r->ranked.front()].setting.Label(), "a=32, b=y, c=0.4");
}

TEST(SearchSettings, StopsAtItsBudgetAndSaysSo) {
  auto space = ParseSearchSpace(kSpace);
  Constructed objective;
  SearchOptions o;
  o.budget = 5;
  int progress = 0;
  o.progress = [&](const Evaluation&, int done, int budget) {
    EXPECT_EQ(done, ++progress);
    EXPECT_EQ(budget, 5);
  };
  auto r = SearchSettings(*space, std::ref(objective), o);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(objective.evaluations, 5);
  EXPECT_EQ(progress, 5);
  EXPECT_TRUE(r->budget_spent);
}

TEST(SearchSettings, ErrorsEndTheSearch) {
  auto space = ParseSearchSpace(kSpace);
  auto r = SearchSettings(*space, [](const Setting&, Fidelity) -> Result<Evaluation> {
    return Status::IoError("the simulator's calibration is gone");
  });
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "the simulator's calibration is gone");
  SearchOptions o;
  o.budget = 0;
  EXPECT_FALSE(SearchSettings(*space, Constructed{}, o).ok());
}

}  // namespace
}  // namespace goodput
