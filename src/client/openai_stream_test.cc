#include "client/openai_stream.h"

#include <boost/json.hpp>
#include <gtest/gtest.h>

namespace goodput::client {
namespace {

TEST(OpenAiStream, OnlyChunksWithGeneratedTextCarryTokens) {
  // vLLM's first chat chunk: a role and empty content. Not a token: TTFT must not start here.
  EXPECT_EQ(ParseStreamChunk(R"({"choices":[{"index":0,"delta":{"role":"assistant","content":""}}]})")->tokens, 0);
  EXPECT_EQ(ParseStreamChunk(R"({"choices":[{"index":0,"delta":{"content":"Hi"}}]})")->tokens, 1);
  EXPECT_EQ(ParseStreamChunk(R"({"choices":[{"index":0,"delta":{"reasoning_content":"hm"}}]})")->tokens, 1);
  EXPECT_EQ(ParseStreamChunk(R"({"choices":[{"index":0,"text":" a"}]})")->tokens, 1);
  auto finish = ParseStreamChunk(R"({"choices":[{"index":0,"text":"","finish_reason":"length"}]})");
  EXPECT_EQ(finish->tokens, 0);
  EXPECT_EQ(finish->finish_reason, "length");
}

TEST(OpenAiStream, UsageDoneAndErrors) {
  auto u = ParseStreamChunk(R"({"choices":[],"usage":{"prompt_tokens":12,"completion_tokens":34,"total_tokens":46}})");
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(u->prompt_tokens, 12);
  EXPECT_EQ(u->completion_tokens, 34);
  EXPECT_TRUE(ParseStreamChunk("[DONE]")->done);
  auto err = ParseStreamChunk(R"({"error":{"message":"KV cache full","code":500}})");
  ASSERT_FALSE(err.ok());
  EXPECT_NE(err.status().message().find("KV cache full"), std::string::npos);
  for (const char* bad : {"{\"choices\": [", "[1,2]", "hello", ""}) {
    EXPECT_FALSE(ParseStreamChunk(bad).ok()) << bad;
  }
  // A count no model could produce is refused, not spread over the chunks' timings.
  for (const char* bad : {R"({"choices":[],"usage":{"prompt_tokens":12,"completion_tokens":1000000000000}})",
                          R"({"choices":[],"usage":{"prompt_tokens":-3,"completion_tokens":34}})",
                          R"({"choices":[],"usage":{"completion_tokens":18446744073709551615}})"}) {
    auto r = ParseStreamChunk(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_NE(r.status().message().find("is not a token count (0 to 16777216)"), std::string::npos)
        << r.status().message();
  }
  EXPECT_EQ(ParseStreamChunk(R"({"choices":[],"usage":{"completion_tokens":16777216}})")->completion_tokens,
            kMaxUsageTokens);
}

TEST(OpenAiStream, RequestBodiesFixLengths) {
  GenerationBody b;
  b.model = "m";
  b.prompt_ids = {100, 101, 150, 200, 227};
  b.max_tokens = 7;
  auto v = boost::json::parse(MakeRequestBody(b)).as_object();
  EXPECT_EQ(v["prompt"].as_array().size(), 5u);
  for (const auto& id : v["prompt"].as_array()) {
    EXPECT_GE(id.as_int64(), 100);
    EXPECT_LT(id.as_int64(), 228);
  }
  EXPECT_EQ(v["max_tokens"].as_int64(), 7);
  EXPECT_EQ(v["min_tokens"].as_int64(), 7);
  EXPECT_TRUE(v["ignore_eos"].as_bool());
  EXPECT_TRUE(v["stream_options"].as_object()["include_usage"].as_bool());
  b.chat = true;
  b.fixed_length = false;
  v = boost::json::parse(MakeRequestBody(b)).as_object();
  EXPECT_FALSE(v.contains("ignore_eos"));
  EXPECT_EQ(v["messages"].as_array()[0].as_object()["content"].as_string().size(), 10u);  // " x" per token
}

}  // namespace
}  // namespace goodput::client
