// Every shape an OpenAI-compatible stream comes in is counted right: k tokens
// per chunk (k = 1, 4, 16), usage on every chunk, only at the end or never,
// with and without [DONE]. The served tokens are the answer's length, the
// per-token ITL is the chunk gap over the tokens the chunk carried, and a
// fixed-length answer that ended cleanly is a success.
#include <numeric>
#include <tuple>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "client/load_client.h"
#include "support/fake_sse_server.h"

namespace goodput::client {
namespace {

using testing::FakeSseServer;
using Usage = FakeSseServer::Options::Usage;

constexpr int kTokens = 32;

std::string UsageName(Usage u) {
  return u == Usage::kAtEnd ? "UsageAtEnd" : u == Usage::kEveryChunk ? "UsageEveryChunk" : "NoUsage";
}

// One fixed-length request of kTokens to a server of the given shape.
RequestRecord OneAnswer(FakeSseServer::Options shape, bool fixed_length = true) {
  RealClock clock;
  shape.ttft_s = 0.001;
  shape.itl_s = 0.002;
  auto server = FakeSseServer::Start(shape, clock);
  EXPECT_TRUE(server.ok());
  if (!server.ok()) return {};
  LoadOptions o;
  o.endpoint.port = (*server)->port();
  o.model = "ok";
  o.timeout_s = 5;
  o.fixed_length = fixed_length;
  auto records = RunLoad(o, FixedLengthWorkload(1, 8, kTokens), ArrivalSpec{}, clock);
  EXPECT_TRUE(records.ok() && records->size() == 1u);
  return records.ok() && !records->empty() ? (*records)[0] : RequestRecord{};
}

int32_t ChunkTokens(const RequestRecord& r) {
  return std::accumulate(r.chunks.begin(), r.chunks.end(), 0,
                         [](int32_t n, const TokenChunk& c) { return n + c.tokens; });
}

class StreamShape : public ::testing::TestWithParam<std::tuple<int, Usage, bool>> {};

TEST_P(StreamShape, CountsEveryTokenAndSplitsTheChunkGap) {
  const auto [k, usage, done] = GetParam();
  FakeSseServer::Options shape;
  shape.tokens_per_chunk = k;
  shape.usage = usage;
  shape.send_done = done;
  const RequestRecord r = OneAnswer(shape);
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.n_out, kTokens);
  ASSERT_EQ(r.chunks.size(), static_cast<size_t>((kTokens + k - 1) / k));
  EXPECT_EQ(ChunkTokens(r), kTokens);
  EXPECT_DOUBLE_EQ(TokensServedIn(r, -1e18, 1e18), kTokens);  // throughput counts tokens, not chunks
  for (const TokenChunk& c : r.chunks) EXPECT_EQ(c.tokens, k) << "32 splits evenly into chunks of " << k;
  // Each gap between chunks is k per-token latencies of gap / k.
  const std::vector<double> itl = Itls(r);
  ASSERT_EQ(itl.size(), static_cast<size_t>(kTokens - k));
  EXPECT_NEAR(itl.back() * k, r.chunks.back().t - r.chunks[r.chunks.size() - 2].t, 1e-12);
  const bool spread = k > 1 && usage != Usage::kEveryChunk;
  EXPECT_EQ(r.note.find("the tokens spread evenly over the chunks") != std::string::npos, spread) << r.note;
  if (!done) {
    EXPECT_NE(r.note.find("without"), std::string::npos) << r.note;
  }
}

INSTANTIATE_TEST_SUITE_P(KTokensPerChunk, StreamShape,
                         ::testing::Combine(::testing::Values(1, 4, 16),
                                            ::testing::Values(Usage::kAtEnd, Usage::kEveryChunk, Usage::kNone),
                                            ::testing::Bool()),
                         [](const auto& info) {
                           return fmt::format("k{}{}{}", std::get<0>(info.param), UsageName(std::get<1>(info.param)),
                                              std::get<2>(info.param) ? "Done" : "NoDone");
                         });

// A last chunk of fewer tokens: 32 tokens in chunks of 5 come as six of 5 and
// one of 2; usage only at the end spreads them evenly instead (4 or 5 each).
TEST(StreamShape, UnevenChunksSpreadTheTotalEvenly) {
  FakeSseServer::Options shape;
  shape.tokens_per_chunk = 5;
  const RequestRecord r = OneAnswer(shape);
  ASSERT_TRUE(r.ok) << r.error;
  ASSERT_EQ(r.chunks.size(), 7u);
  EXPECT_EQ(ChunkTokens(r), kTokens);
  for (const TokenChunk& c : r.chunks) {
    EXPECT_GE(c.tokens, 4);
    EXPECT_LE(c.tokens, 5);
  }
}

// Without usage, [DONE] or a finish reason, a stream of fewer chunks than the
// tokens asked may have been cut: a failure; with one token per chunk all
// the tokens asked arrived: whole.
TEST(StreamShape, WithoutUsageDoneOrFinishReasonOnlyAllTheTokensMakeItWhole) {
  FakeSseServer::Options shape;
  shape.usage = Usage::kNone;
  shape.send_done = false;
  shape.finish_reason = false;
  shape.tokens_per_chunk = 4;
  const RequestRecord cut = OneAnswer(shape);
  EXPECT_FALSE(cut.ok);
  EXPECT_NE(cut.error.find("closed mid-stream after 8 tokens (no [DONE])"), std::string::npos) << cut.error;
  shape.tokens_per_chunk = 1;
  const RequestRecord whole = OneAnswer(shape);
  ASSERT_TRUE(whole.ok) << whole.error;
  EXPECT_EQ(whole.n_out, kTokens);
}

// A request of no fixed length with usage only at the end: its length is the
// usage, spread over the chunks; without usage its chunks are counted, loudly.
TEST(StreamShape, OpenLengthAnswersTakeTheUsageElseCountChunksLoudly) {
  FakeSseServer::Options shape;
  shape.tokens_per_chunk = 4;
  const RequestRecord r = OneAnswer(shape, /*fixed_length=*/false);
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.n_out, kTokens);
  EXPECT_EQ(ChunkTokens(r), kTokens);
  shape.usage = Usage::kNone;
  const RequestRecord counted = OneAnswer(shape, /*fixed_length=*/false);
  ASSERT_TRUE(counted.ok) << counted.error;
  EXPECT_EQ(counted.n_out, kTokens / 4);
  EXPECT_NE(counted.note.find("WARNING: no usage chunk"), std::string::npos) << counted.note;
}

}  // namespace
}  // namespace goodput::client
