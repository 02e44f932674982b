#include "client/sse.h"

#include <gtest/gtest.h>

namespace goodput::client {
namespace {

std::vector<SseEvent> FeedAll(const std::vector<std::string>& pieces) {
  SseParser p;
  std::vector<SseEvent> out;
  for (const auto& piece : pieces) p.Feed(piece, out);
  return out;
}

TEST(Sse, SeveralEventsInOneRead) {
  const auto ev = FeedAll({"data: {\"a\":1}\n\ndata: {\"a\":2}\n\ndata: [DONE]\n\n"});
  ASSERT_EQ(ev.size(), 3u);
  EXPECT_EQ(ev[0].data, "{\"a\":1}");
  EXPECT_EQ(ev[1].data, "{\"a\":2}");
  EXPECT_EQ(ev[2].data, "[DONE]");
}

TEST(Sse, EventSplitAtEveryByte) {
  const std::string stream = "data: hello\r\n\r\n: keep-alive comment\n\ndata: world\n\n";
  std::vector<std::string> bytes;
  for (char c : stream) bytes.emplace_back(1, c);
  const auto ev = FeedAll(bytes);
  ASSERT_EQ(ev.size(), 2u);  // the comment-only block dispatches nothing
  EXPECT_EQ(ev[0].data, "hello");
  EXPECT_EQ(ev[1].data, "world");
}

TEST(Sse, MultiLineDataEventNamesAndBareCr) {
  const auto ev = FeedAll({"event: error\rdata: line1\rdata:line2\r\r", "id: 7\nretry: 10\ndata\n\n"});
  ASSERT_EQ(ev.size(), 2u);
  EXPECT_EQ(ev[0].event, "error");
  EXPECT_EQ(ev[0].data, "line1\nline2");
  EXPECT_EQ(ev[1].data, "");  // a bare "data" field is an empty data line
}

TEST(Sse, UnfinishedEventIsHeldNotEmitted) {
  SseParser p;
  std::vector<SseEvent> out;
  p.Feed("data: partial", out);
  EXPECT_TRUE(out.empty());
  EXPECT_TRUE(p.HasPartial());
  p.Feed("\n", out);
  EXPECT_TRUE(out.empty());
  EXPECT_TRUE(p.HasPartial());
  p.Feed("\n", out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].data, "partial");
  EXPECT_FALSE(p.HasPartial());
}

}  // namespace
}  // namespace goodput::client
