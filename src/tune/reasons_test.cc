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

}  // namespace
}  // namespace goodput
