#include "client/load_client.h"

#include <algorithm>

#include <gtest/gtest.h>

#include "support/fake_sse_server.h"

namespace goodput::client {
namespace {

using testing::FakeSseServer;

LoadOptions OptionsFor(const FakeSseServer& s, const std::string& model) {
  LoadOptions o;
  o.endpoint.port = s.port();
  o.model = model;
  o.timeout_s = 2;
  return o;
}

// Against a server that writes tokens 20 ms apart after 50 ms, the records
// show those times: TTFT from the first token chunk (not the role chunk), and
// TPOT over the usage count.
TEST(LoadClient, RecordsWhatTheServerSent) {
  RealClock clock;
  auto server = std::move(FakeSseServer::Start({0.05, 0.02}, clock).value());
  ArrivalSpec closed;
  closed.concurrency = 2;
  auto records = RunLoad(OptionsFor(*server, "ok"), FixedLengthWorkload(4, 8, 5), closed, clock);
  ASSERT_TRUE(records.ok()) << records.status().message();
  ASSERT_EQ(records->size(), 4u);
  for (const RequestRecord& r : *records) {
    ASSERT_TRUE(r.ok) << r.error;
    EXPECT_EQ(r.n_out, 5);
    EXPECT_EQ(r.n_in, 1);  // the server's usage wins over the planned 8
    EXPECT_EQ(r.chunks.size(), 5u);
    EXPECT_GE(*Ttft(r), 0.05);
    EXPECT_LT(*Ttft(r), 0.5);
    EXPECT_GE(*Tpot(r), 0.015);
    EXPECT_LT(*Tpot(r), 0.2);
    EXPECT_GE(r.t_sent, r.t_arrival);
  }
}

// Every fault is recorded with its reason; the run completes.
TEST(LoadClient, RecordsEveryFaultWithItsReason) {
  RealClock clock;
  auto server = std::move(FakeSseServer::Start({0.001, 0.001}, clock).value());
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"fail-500", "HTTP 500"}, {"not-sse", "not an SSE stream"}, {"malformed", "malformed SSE data"},
      {"cut", "closed mid-stream after 2 tokens"}, {"stall", "timeout after 0.5 s"}};
  for (const auto& [model, reason] : cases) {
    LoadOptions o = OptionsFor(*server, model);
    o.timeout_s = 0.5;
    auto records = RunLoad(o, FixedLengthWorkload(2, 8, 5), ArrivalSpec{}, clock);
    ASSERT_TRUE(records.ok()) << model;
    for (const RequestRecord& r : *records) {
      EXPECT_FALSE(r.ok) << model;
      EXPECT_NE(r.error.find(reason), std::string::npos) << model << ": [" << r.error << "]";
    }
  }
}

TEST(LoadClient, UnreachableServerIsARecordedFailure) {
  RealClock clock;
  uint16_t port = 0;
  {
    auto server = std::move(FakeSseServer::Start({}, clock).value());
    port = server->port();
  }  // closed: nothing listens there now
  LoadOptions o;
  o.endpoint.port = port;
  o.model = "ok";
  auto records = RunLoad(o, FixedLengthWorkload(3, 8, 2), ArrivalSpec{}, clock);
  ASSERT_TRUE(records.ok());
  ASSERT_EQ(records->size(), 3u);
  for (const auto& r : *records) {
    EXPECT_FALSE(r.ok);
    EXPECT_NE(r.error.find("connect"), std::string::npos) << r.error;
  }
}

TEST(LoadClient, UsageCountWinsAndMissingUsageFallsBackToCounted) {
  RealClock clock;
  auto server = std::move(FakeSseServer::Start({0.001, 0.001}, clock).value());
  auto lies = RunLoad(OptionsFor(*server, "usage-lies"), FixedLengthWorkload(1, 8, 4), ArrivalSpec{}, clock);
  EXPECT_EQ((*lies)[0].n_out, 5);
  EXPECT_EQ((*lies)[0].chunks.size(), 4u);
  auto none = RunLoad(OptionsFor(*server, "no-usage"), FixedLengthWorkload(1, 8, 4), ArrivalSpec{}, clock);
  EXPECT_TRUE((*none)[0].ok);
  EXPECT_EQ((*none)[0].n_out, 4);
}

// Open loop: 20 requests/s for 1 s; each is sent at its own scheduled time.
TEST(LoadClient, OpenLoopSendsOnTheAbsoluteSchedule) {
  RealClock clock;
  auto server = std::move(FakeSseServer::Start({0.001, 0.001}, clock).value());
  ArrivalSpec poisson;
  poisson.kind = ArrivalKind::kPoisson;
  poisson.rate = 20;
  auto records = RunLoad(OptionsFor(*server, "ok"), FixedLengthWorkload(20, 8, 3), poisson, clock);
  ASSERT_TRUE(records.ok());
  std::vector<double> lags;
  double prev = -1;
  for (const auto& r : *records) {
    ASSERT_TRUE(r.ok) << r.error;
    EXPECT_GE(r.t_arrival, prev);  // issue order is arrival order
    prev = r.t_arrival;
    lags.push_back(SendLag(r));
  }
  EXPECT_GT(records->back().t_arrival, 0.2);  // spread over time, not sent at once
  std::sort(lags.begin(), lags.end());
  EXPECT_GE(lags.front(), 0);
  EXPECT_LT(lags[lags.size() / 2], 0.05);  // median lateness (a loose bound: the machine is shared)
}

}  // namespace
}  // namespace goodput::client
