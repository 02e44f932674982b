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

// A closed-loop client with a think time waits it after each answer before
// sending again (its first request goes at once).
TEST(LoadClient, ClosedLoopClientWaitsItsThinkTime) {
  RealClock clock;
  auto server = std::move(FakeSseServer::Start({0.01, 0.005}, clock).value());
  Workload w = FixedLengthWorkload(3, 8, 3);
  w.client_think = ThinkTime{0.2, 0.2};
  ArrivalSpec one;
  one.concurrency = 1;
  auto records = RunLoad(OptionsFor(*server, "ok"), w, one, clock);
  ASSERT_TRUE(records.ok()) << records.status().message();
  ASSERT_EQ(records->size(), 3u);
  std::vector<RequestRecord> sent = *records;
  std::sort(sent.begin(), sent.end(), [](const auto& a, const auto& b) { return a.t_sent < b.t_sent; });
  for (size_t i = 1; i < sent.size(); ++i) {
    ASSERT_TRUE(sent[i - 1].ok && sent[i - 1].t_last) << sent[i - 1].error;
    EXPECT_GE(sent[i].t_sent - *sent[i - 1].t_last, 0.2) << i;
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

// The usage's count is the answer's length, its tokens spread over the chunks
// that came (one carries two), so throughput and ITL count them all.
TEST(LoadClient, UsageCountWins) {
  RealClock clock;
  auto server = std::move(FakeSseServer::Start({0.001, 0.001}, clock).value());
  auto lies = RunLoad(OptionsFor(*server, "usage-lies"), FixedLengthWorkload(1, 8, 4), ArrivalSpec{}, clock);
  EXPECT_EQ((*lies)[0].n_out, 5);
  ASSERT_EQ((*lies)[0].chunks.size(), 4u);
  EXPECT_EQ((*lies)[0].chunks.back().tokens, 2);
  EXPECT_EQ(Itls((*lies)[0]).size(), 4u);
  EXPECT_NE((*lies)[0].note.find("the tokens spread evenly over the chunks"), std::string::npos) << (*lies)[0].note;
}

// Without a usage chunk, a fixed-length request's output is the length it
// asked for; otherwise the counted chunks, with a loud note (chunks are not
// tokens).
TEST(LoadClient, MissingUsageUsesTheFixedLengthElseCountsChunksLoudly) {
  RealClock clock;
  auto server = std::move(FakeSseServer::Start({0.001, 0.001}, clock).value());
  LoadOptions o = OptionsFor(*server, "no-usage");
  auto fixed = RunLoad(o, FixedLengthWorkload(1, 8, 4), ArrivalSpec{}, clock);
  ASSERT_TRUE((*fixed)[0].ok) << (*fixed)[0].error;
  EXPECT_EQ((*fixed)[0].n_out, 4);
  EXPECT_NE((*fixed)[0].note.find("no usage chunk: output length from the fixed length asked"), std::string::npos)
      << (*fixed)[0].note;
  o.fixed_length = false;
  auto counted = RunLoad(o, FixedLengthWorkload(1, 8, 4), ArrivalSpec{}, clock);
  ASSERT_TRUE((*counted)[0].ok);
  EXPECT_EQ((*counted)[0].n_out, 4);
  EXPECT_NE((*counted)[0].note.find("WARNING: no usage chunk: output tokens counted from chunks"), std::string::npos)
      << (*counted)[0].note;
}

// A stream that ends cleanly after its usage chunk but without [DONE] is a
// success, with a note saying so.
TEST(LoadClient, CleanEndWithUsageButNoDoneIsASuccessWithANote) {
  RealClock clock;
  auto server = std::move(FakeSseServer::Start({0.001, 0.001, /*keep_alive=*/true}, clock).value());
  auto r = RunLoad(OptionsFor(*server, "no-done"), FixedLengthWorkload(2, 8, 3), ArrivalSpec{}, clock);
  ASSERT_TRUE(r.ok());
  for (const RequestRecord& rec : *r) {
    EXPECT_TRUE(rec.ok) << rec.error;
    EXPECT_EQ(rec.n_out, 3);
    EXPECT_NE(rec.note.find("without [DONE]"), std::string::npos) << rec.note;
  }
}

// SSE lines are bounded: a server that sends an endless line fails the
// request ("line too long") instead of growing the client's memory.
TEST(LoadClient, EndlessSseLineFailsAsLineTooLong) {
  RealClock clock;
  auto server = std::move(FakeSseServer::Start({}, clock).value());
  auto r = RunLoad(OptionsFor(*server, "huge-line"), FixedLengthWorkload(1, 8, 3), ArrivalSpec{}, clock);
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE((*r)[0].ok);
  EXPECT_NE((*r)[0].error.find("line too long"), std::string::npos) << (*r)[0].error;
}

// HTTP chunk lines are bounded too: a chunk-size line whose extension never
// ends (the client once buffered a 1 GiB one whole: 2.14 GB resident) fails
// the request at 64 KiB.
TEST(LoadClient, EndlessChunkLineFailsAtItsBound) {
  RealClock clock;
  auto server = std::move(FakeSseServer::Start({}, clock).value());
  auto r = RunLoad(OptionsFor(*server, "huge-chunk-line"), FixedLengthWorkload(1, 8, 3), ArrivalSpec{}, clock);
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE((*r)[0].ok);
  EXPECT_NE((*r)[0].error.find("over 64 KiB without a complete chunk line"), std::string::npos) << (*r)[0].error;
}

// Chunks that carry two tokens each (told by continuous usage): ITL is the
// gap / 2 for each token, and cut-stream messages count tokens.
TEST(LoadClient, ChunksOfSeveralTokensSplitTheirGap) {
  RealClock clock;
  auto server = std::move(FakeSseServer::Start({0.001, 0.02}, clock).value());
  auto r = RunLoad(OptionsFor(*server, "two-per-chunk"), FixedLengthWorkload(1, 8, 6), ArrivalSpec{}, clock);
  ASSERT_TRUE((*r)[0].ok) << (*r)[0].error;
  ASSERT_EQ((*r)[0].chunks.size(), 3u);
  for (const TokenChunk& c : (*r)[0].chunks) EXPECT_EQ(c.tokens, 2);
  const std::vector<double> itl = Itls((*r)[0]);
  ASSERT_EQ(itl.size(), 4u);  // two gaps, two tokens each
  for (double g : itl) {
    EXPECT_GT(g, 0.008);  // 20 ms apart / 2 tokens
    EXPECT_LT(g, 0.1);
  }
}

// One request of 5 output tokens to `server` answering in `mode`.
RequestRecord FiveTokensFrom(FakeSseServer& server, const char* mode, const Clock& clock) {
  auto r = RunLoad(OptionsFor(server, mode), FixedLengthWorkload(1, 8, 5), ArrivalSpec{}, clock);
  EXPECT_TRUE(r.ok() && r->size() == 1u);
  return r.ok() && !r->empty() ? (*r)[0] : RequestRecord{};
}

void ExpectFiveChunksOfOneToken(const RequestRecord& r) {
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.n_out, 5);
  ASSERT_EQ(r.chunks.size(), 5u);
  for (const TokenChunk& c : r.chunks) EXPECT_EQ(c.tokens, 1);
}

// A server that puts the total usage on its last token chunk only: that chunk
// is one token like the others, not the whole answer.
TEST(LoadClient, UsageOnTheLastChunkOnlyIsNotThatChunksSize) {
  RealClock clock;
  auto server = std::move(FakeSseServer::Start({0.001, 0.001}, clock).value());
  ExpectFiveChunksOfOneToken(FiveTokensFrom(*server, "usage-on-last", clock));
}

// Tokens whose text is held back or empty (vLLM streams them with text "")
// still count: with continuous usage each chunk carries what its count adds;
// with no text at all and usage only at the end, the tokens arrive with it —
// a successful answer always has a first token.
TEST(LoadClient, TokensWithoutTextCountByTheirUsage) {
  RealClock clock;
  auto server = std::move(FakeSseServer::Start({0.001, 0.001}, clock).value());
  const RequestRecord r = FiveTokensFrom(*server, "no-text", clock);
  ExpectFiveChunksOfOneToken(r);
  ASSERT_TRUE(r.t_first.has_value());
  EXPECT_LT(*r.t_first, *r.t_last);
  const RequestRecord end = FiveTokensFrom(*server, "no-text-at-all", clock);
  ASSERT_TRUE(end.ok) << end.error;
  EXPECT_EQ(end.n_out, 5);
  ASSERT_EQ(end.chunks.size(), 1u);
  EXPECT_EQ(end.chunks[0].tokens, 5);
  ASSERT_TRUE(end.t_first.has_value());
  EXPECT_EQ(*end.t_first, *end.t_last);
}

// A keep-alive connection the server closed while idle is not used: the next
// request goes on a fresh connection and succeeds (slow open-loop traffic).
TEST(LoadClient, IdleConnectionClosedByTheServerIsNotAFailure) {
  RealClock clock;
  FakeSseServer::Options opts{0.001, 0.001, /*keep_alive=*/true, /*idle_close_s=*/0.05};
  auto server = std::move(FakeSseServer::Start(opts, clock).value());
  ArrivalSpec slow;
  slow.kind = ArrivalKind::kPoisson;
  slow.rate = 5;  // ~200 ms apart: every pooled connection has been closed by then
  auto r = RunLoad(OptionsFor(*server, "ok"), FixedLengthWorkload(6, 8, 2), slow, clock);
  ASSERT_TRUE(r.ok());
  for (const RequestRecord& rec : *r) EXPECT_TRUE(rec.ok) << rec.error;
  EXPECT_GE(server->idle_closes(), 1);
}

// Each request names its class (x-goodput-class) and, when the class has one,
// its priority, so class-aware servers can schedule it.
TEST(LoadClient, RequestsCarryTheirClassAndPriority) {
  RealClock clock;
  auto server = std::move(FakeSseServer::Start({0.001, 0.001}, clock).value());
  Workload w = FixedLengthWorkload(4, 8, 2, "interactive");
  w.classes[0].priority = -1;
  RequestClass batch = w.classes[0];
  batch.name = "batch";
  batch.priority = 0;
  w.classes.push_back(batch);
  auto r = RunLoad(OptionsFor(*server, "ok"), w, ArrivalSpec{}, clock);
  ASSERT_TRUE(r.ok());
  int interactive = 0, other = 0;
  for (int64_t i = 0; i < static_cast<int64_t>(r->size()); ++i) {
    auto seen = server->SeenRequest(i);
    ASSERT_TRUE(seen.has_value()) << i;
    EXPECT_EQ(seen->class_header, (*r)[i].request_class);
    if (seen->class_header == "interactive") {
      ++interactive;
      EXPECT_EQ(seen->priority, -1);
    } else {
      ++other;
      EXPECT_FALSE(seen->priority.has_value());  // 0 is not sent: vLLM refuses priorities without its policy
    }
  }
  EXPECT_GT(interactive + other, 0);
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
