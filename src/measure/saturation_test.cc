#include "measure/saturation.h"

#include <gtest/gtest.h>

namespace goodput {
namespace {

// Requests arriving every `gap` s, each served in turn by one server taking
// `service` s for its 10 tokens (first token at the start of its service).
std::vector<RequestRecord> SingleServer(int n, double gap, double service) {
  std::vector<RequestRecord> out;
  double free_at = 0;
  for (int i = 0; i < n; ++i) {
    RequestRecord r;
    r.t_arrival = r.t_sent = i * gap;
    const double start = std::max(r.t_arrival, free_at);
    r.t_first = start + service / 10;
    r.t_last = free_at = start + service;
    r.n_out = 10;
    out.push_back(r);
  }
  return out;
}

// Served at half the offered rate (by hand: 10/s offered, 5/s served): the
// median request waits ~10 s, and the 20 s after it see 100 of the 200
// requests done; the backlog grows by 5/s and TTFT rises 1 s per second (each
// request waits 0.1 s more than the one 0.1 s before it).
TEST(Saturation, AQueueServedAtHalfTheOfferedRateIsSaturated) {
  const auto records = SingleServer(200, 0.1, 0.2);
  const Saturation s = RunSaturation(records, Window{0, 20}, true);
  EXPECT_TRUE(s.saturated);
  EXPECT_NEAR(s.offered_rate, 10, 1e-9);
  EXPECT_NEAR(s.backlog_growth, 5, 0.1);
  EXPECT_NEAR(s.served_share, 0.5, 0.01);
  EXPECT_NEAR(s.ttft_slope, 1, 0.01);
  EXPECT_NE(s.Evidence().find("50% of the 10 requests/s offered were served"), std::string::npos) << s.Evidence();
  // The same records from a closed loop: its clients wait, so it cannot outrun the engine.
  EXPECT_FALSE(RunSaturation(records, Window{0, 20}, false).saturated);
}

// Served faster than offered: nothing queues.
TEST(Saturation, AServerFasterThanTheLoadIsNot) {
  const Saturation s = RunSaturation(SingleServer(200, 0.1, 0.05), Window{0, 20}, true);
  EXPECT_FALSE(s.saturated);
  EXPECT_NEAR(s.backlog_growth, 0, 0.1);
  EXPECT_NEAR(s.ttft_slope, 0, 1e-9);
}

// 100 requests 0.1 s apart, each with its first token 0.05 s after arriving
// and its last `e2e(arrival)` after.
std::vector<RequestRecord> Unqueued(double (*e2e)(double)) {
  std::vector<RequestRecord> records;
  for (int i = 0; i < 100; ++i) {
    RequestRecord r;
    r.t_arrival = i * 0.1;
    r.t_first = r.t_arrival + 0.05;
    r.t_last = r.t_arrival + e2e(r.t_arrival);
    r.n_out = 10;
    records.push_back(r);
  }
  return records;
}

// Requests that take long but do not queue (a window twice one request's
// latency): the backlog fills to its steady state, and only half the
// window's requests finish within it, but all of them one latency later.
TEST(Saturation, ABacklogFillingToItsSteadyStateIsNot) {
  const Saturation s = RunSaturation(Unqueued([](double) { return 5.0; }), Window{0, 10}, true);
  EXPECT_GT(s.backlog_growth, 0.4 * s.offered_rate);
  EXPECT_NEAR(s.served_share, 1, 1e-9);
  EXPECT_FALSE(s.saturated) << s.Evidence();
}

// An engine that admits every request and slows them all (no queue: TTFT
// flat, each request's decode longer than the last) outruns itself too: by
// hand, E2E = 1 + 0.5 t, median 3.5 s; of the 100 requests, those done in
// [3.5, 13.5) arrived in [1.67, 8.33): 67.
TEST(Saturation, ABatchGrowingWithoutBoundIsSaturated) {
  const Saturation s = RunSaturation(Unqueued([](double t) { return 1 + 0.5 * t; }), Window{0, 10}, true);
  EXPECT_NEAR(s.ttft_slope, 0, 1e-9);
  EXPECT_NEAR(s.served_share, 0.67, 0.015);
  EXPECT_TRUE(s.saturated) << s.Evidence();
}

// A queue growing slowly (served at 95% of the offered rate): the served
// share alone would pass, the TTFT rising 0.052 s per second (by hand:
// 0.1052 / 0.1 - 1) over 200 s, 10 s in all, does not.
TEST(Saturation, ASlowlyGrowingQueueIsSaturatedByItsTtft) {
  const Saturation s = RunSaturation(SingleServer(2000, 0.1, 0.1052), Window{0, 200}, true);
  EXPECT_GT(s.served_share, kSaturatedServed);
  EXPECT_NEAR(s.ttft_slope, 0.052, 0.001);
  EXPECT_TRUE(s.saturated) << s.Evidence();
}

// Failed requests hold no place in the queue.
TEST(Saturation, FailedRequestsLeaveTheBacklogWhenTheyArrive) {
  auto records = SingleServer(200, 0.1, 0.2);
  for (auto& r : records) {
    r.ok = false;
    r.t_first.reset();
    r.t_last.reset();
  }
  EXPECT_NEAR(RunSaturation(records, Window{0, 20}, true).backlog_growth, 0, 1e-9);
}

TEST(Saturation, RepetitionsPoolByMajority) {
  Saturation yes, no;
  yes.saturated = true;
  yes.backlog_growth = 4;
  no.backlog_growth = 0;
  EXPECT_TRUE(PoolSaturation({yes, yes, no}).saturated);
  EXPECT_FALSE(PoolSaturation({yes, no}).saturated);
  EXPECT_EQ(PoolSaturation({yes, yes, no}).backlog_growth, 4);
}

}  // namespace
}  // namespace goodput
