#include "workload/conversations.h"

#include <gtest/gtest.h>

#include <fstream>

#include "support/temp_file.h"

namespace goodput {
namespace {

using testing::WriteTempFile;

// By hand, one token per character: the first two turns are prompt and
// answer whoever speaks them (as vLLM samples ShareGPT), a third turn is not
// counted, a conversation of one turn is skipped, other fields are ignored,
// and characters are code points ("héllo" is 5, written raw or escaped).
TEST(Conversations, FirstTwoTurnsAsVllmSamplesThem) {
  const std::string path = WriteTempFile("sharegpt.json", R"([
    {"id": "a", "conversations": [{"from": "human", "value": "abcdefgh"}, {"from": "gpt", "value": "0123456789"},
                                  {"from": "human", "value": "a third turn, not counted"}]},
    {"id": "b", "conversations": [{"from": "human", "value": "alone"}]},
    {"id": "c", "meta": {"value": "not a turn", "n": [1, 2.5, true, null]},
     "conversations": [{"from": "human", "value": "h\u00e9llo"}, {"value": "héllo wörld", "from": "gpt"}]}
  ])");
  auto c = ReadConversations(path, ConversationOptions{1, false});
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->conversations, 3);
  EXPECT_EQ(c->too_short, 1);
  ASSERT_EQ(c->rows.size(), 2u);
  EXPECT_EQ(c->rows[0].input_tokens, 8);
  EXPECT_EQ(c->rows[0].output_tokens, 10);
  EXPECT_EQ(c->rows[1].input_tokens, 5);
  EXPECT_EQ(c->rows[1].output_tokens, 11);
  // Four characters a token, rounded: 8 -> 2, 10 -> 3 (2.5 rounds away from zero), 5 -> 1, 11 -> 3.
  auto four = ReadConversations(path);
  ASSERT_TRUE(four.ok());
  EXPECT_EQ(four->rows[0].input_tokens, 2);
  EXPECT_EQ(four->rows[0].output_tokens, 3);
  EXPECT_EQ(four->rows[1].input_tokens, 1);
  EXPECT_EQ(four->rows[1].output_tokens, 3);
}

// vLLM's benchmark filter: at least 4 tokens each, the prompt at most 1,024,
// prompt + answer at most 2,048.
TEST(Conversations, VllmBenchFilter) {
  const auto turn = [](size_t n) { return "\"" + std::string(n, 'x') + "\""; };
  const auto conv = [&](size_t in, size_t out) {
    return R"({"conversations": [{"from": "human", "value": )" + turn(in) + R"(}, {"from": "gpt", "value": )" +
           turn(out) + "}]}";
  };
  const std::string path =
      WriteTempFile("filter.json", "[" + conv(3, 100) + "," + conv(100, 3) + "," + conv(1025, 10) + "," +
                                       conv(1024, 1024) + "," + conv(1024, 1025) + "," + conv(4, 4) + "]");
  auto all = ReadConversations(path, ConversationOptions{1, false});
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->rows.size(), 6u);
  auto kept = ReadConversations(path, ConversationOptions{1, true});
  ASSERT_TRUE(kept.ok()) << kept.status().message();
  ASSERT_EQ(kept->rows.size(), 2u);
  EXPECT_EQ(kept->filtered, 4);
  EXPECT_EQ(kept->rows[0].input_tokens + kept->rows[0].output_tokens, 2048);
  EXPECT_EQ(kept->rows[1].input_tokens, 4);
}

// Read in 1 MiB blocks: turns that straddle block boundaries count whole.
TEST(Conversations, LongFileStreamsAcrossBlocks) {
  const std::string path = testing::TempPath("long.json");
  {
    std::ofstream f(path);
    f << "[";
    for (int i = 0; i < 3000; ++i) {
      f << (i ? "," : "") << R"({"conversations": [{"from": "human", "value": ")" << std::string(700 + i % 7, 'p')
        << R"("}, {"from": "gpt", "value": ")" << std::string(1500, 'a') << "\"}]}";
    }
    f << "]";
  }
  auto c = ReadConversations(path, ConversationOptions{1, false});
  ASSERT_TRUE(c.ok()) << c.status().message();
  ASSERT_EQ(c->rows.size(), 3000u);
  for (int i = 0; i < 3000; ++i) {
    ASSERT_EQ(c->rows[i].input_tokens, 700 + i % 7) << i;
    ASSERT_EQ(c->rows[i].output_tokens, 1500) << i;
  }
}

TEST(Conversations, BrokenInputIsOneClearError) {
  const auto error = [](const std::string& name, const std::string& text, ConversationOptions o = {}) {
    auto c = ReadConversations(WriteTempFile(name, text), o);
    EXPECT_FALSE(c.ok()) << name;
    return c.ok() ? std::string() : c.status().message();
  };
  EXPECT_NE(error("object.json", R"({"conversations": []})").find("expected a JSON array of conversations"),
            std::string::npos);
  EXPECT_NE(error("cut.json", R"([{"conversations": [{"from": "human", "value": "ab)").find("not valid JSON"),
            std::string::npos);
  EXPECT_NE(error("nested.json", "[[1, 2]]").find("conversation object"), std::string::npos);
  EXPECT_NE(error("none.json", R"([{"conversations": [{"from": "human", "value": "x"}]}, 3, "s"])")
                .find("no conversation with a prompt and an answer (1 conversations, 1 of fewer than two turns"),
            std::string::npos);
  EXPECT_NE(error("zero.json", "[]", ConversationOptions{0, false}).find("must be 0.25 to 100, not 0"),
            std::string::npos);
  // 1e-300 characters a token once made every length 1e300 (cast to whatever the integer became).
  EXPECT_NE(error("tiny.json", "[]", ConversationOptions{1e-300, false}).find("must be 0.25 to 100"),
            std::string::npos);
  EXPECT_NE(error("huge.json", "[]", ConversationOptions{1e300, false}).find("must be 0.25 to 100"), std::string::npos);
  EXPECT_NE(error("trailing.json", R"([] x)").find("not valid JSON"), std::string::npos);
  auto missing = ReadConversations("/nonexistent/sharegpt.json");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("cannot read conversations"), std::string::npos);
  EXPECT_TRUE(IsJsonArrayFile(WriteTempFile("array.json", "\n  [1]")));
  EXPECT_FALSE(IsJsonArrayFile(WriteTempFile("jsonl.json", "{\"timestamp\": 0}")));
  EXPECT_FALSE(IsJsonArrayFile("/nonexistent/x.json"));
}

}  // namespace
}  // namespace goodput
