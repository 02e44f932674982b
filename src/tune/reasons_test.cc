#include "tune/reasons.h"

#include <gtest/gtest.h>

namespace goodput {
namespace {

// The first load that did not hold names what held it back: a load that was
// not sustainable says so with its evidence, beside the KV pool's preemptions.
TEST(Reasons, TheLimitNamesALoadThatWasNotSustainable) {
  SettingResult r;
  PointResult ok, over;
  ok.load = over.load = ArrivalSpec{ArrivalKind::kPoisson, 1, 4, 1};
  ok.label = "4/s";
  over.label = "8/s";
  over.preemptions = 12;
  over.saturation = Saturation{true, 8, 0.5, 4, 1};
  over.verdict = Verdict::kFails;
  r.sweep.points = {ok, over};
  r.sweep.capacity = 0;
  EXPECT_EQ(LimitOf(r),
            "at 8/s: not sustainable: 50% of the 8 requests/s offered were served (in a window as long, one median "
            "latency later), the backlog grew by 4.00 requests/s, TTFT rose 1.00 s per second of the run; 12 "
            "preemptions (the KV pool filled)");
  r.sweep.capacity = 1;
  EXPECT_EQ(LimitOf(r), "");
}

// An evaluation at `clients` capacity (closed loop) with its score.
Evaluation At(const std::string& tokens, int clients, double resolution, double margin, Fidelity fidelity) {
  Evaluation e;
  e.setting.flags = {{"max-num-batched-tokens", tokens}};
  e.fidelity = fidelity;
  PointResult p;
  p.load = ArrivalSpec{ArrivalKind::kClosedLoop, clients, 0, 1};
  p.label = std::to_string(clients);
  e.result.sweep.points = {p};
  e.result.sweep.capacity = 0;
  e.score.judged = true;
  e.score.capacity = clients;
  e.score.capacity_resolution = resolution;
  e.score.goodput = 10.87;
  e.score.slo_margin = margin;
  return e;
}

// Two capacities the ranking takes as alike are both printed, and said to be
// alike within the resolution, never one of them as if it were both.
TEST(Reasons, CapacitiesAlikeWithinTheResolutionAreBothNamed) {
  SearchSpace space;
  space.dimensions = {{"max-num-batched-tokens", {"8192", "16384"}, true}};
  SearchResult search;
  search.evaluations = {At("8192", 256, 0.05, 0.03, Fidelity::kFull), At("16384", 224, 0.2, 0.12, Fidelity::kScreen)};
  const auto reasons = Reasons(search, space, search.evaluations[0].setting);
  ASSERT_EQ(reasons.size(), 1u);
  EXPECT_EQ(reasons[0],
            "max-num-batched-tokens=8192: the simulator ranks 16384 higher, screened (capacity 224 clients vs 256 "
            "clients, alike within the search's resolution, goodput alike; SLO margin +12% vs +3%); this value was "
            "chosen by what the target measured");
  search.evaluations[1] = At("16384", 256, 0.05, 0.12, Fidelity::kFull);  // the same capacity: named once
  EXPECT_NE(Reasons(search, space, search.evaluations[0].setting)[0].find("(capacity 256 clients, goodput alike"),
            std::string::npos);
}

}  // namespace
}  // namespace goodput
