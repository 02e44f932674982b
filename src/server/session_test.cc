// The API's bytes without a socket: what a GenerationSession turns a request
// body and engine outputs into, checked against OpenAI's formats.
#include "server/session.h"

#include <boost/json.hpp>
#include <gtest/gtest.h>

namespace goodput::server {
namespace {

namespace json = boost::json;

struct Fixture {
  ByteTokenizer tok;
  ServedModel model{"m", 64, &tok, {"offline"}};

  GenerationSession Open(const std::string& body, bool chat, const std::string& header = "") {
    auto s = GenerationSession::Open(model, {body, chat, header, 7, 99, 10.0, 1700000000.0});
    EXPECT_TRUE(std::holds_alternative<GenerationSession>(s)) << std::get<ApiError>(s).message;
    return std::get<GenerationSession>(std::move(s));
  }
  ApiError Refuse(const std::string& body, bool chat = false) {
    auto s = GenerationSession::Open(model, {body, chat, "", 7, 99, 10.0, 0});
    EXPECT_TRUE(std::holds_alternative<ApiError>(s));
    return std::get<ApiError>(s);
  }
};

RequestOutput Output(const std::string& text, double t, bool finished = false,
                     FinishReason reason = FinishReason::kNone) {
  RequestOutput o;
  o.id = 7;
  o.new_token_ids = ByteTokenizer().Encode(text);
  o.num_new_tokens = static_cast<int32_t>(o.new_token_ids.size());
  o.finished = finished;
  o.reason = reason;
  o.time = t;
  return o;
}

// "data: {...}\n\n" events as JSON values (or the string "[DONE]").
std::vector<json::value> Events(const std::string& sse) {
  std::vector<json::value> out;
  for (size_t at = 0; (at = sse.find("data: ", at)) != std::string::npos;) {
    const size_t end = sse.find("\n\n", at);
    const std::string data = sse.substr(at + 6, end - at - 6);
    out.push_back(data == "[DONE]" ? json::value("[DONE]") : json::parse(data));
    at = end + 2;
  }
  return out;
}

// An output whose tokens carry log-probabilities: each token's is -(its
// position + 1) / 10, with one alternative ('z', at -5).
RequestOutput WithLogprobs(const std::string& text, double t, size_t first, bool finished = false) {
  RequestOutput o = Output(text, t, finished, finished ? FinishReason::kLength : FinishReason::kNone);
  for (size_t i = 0; i < o.new_token_ids.size(); ++i) {
    const int32_t z = ByteTokenizer().Encode("z")[0];
    o.new_logprobs.push_back(TokenLogprob{-0.1f * static_cast<float>(first + i + 1), {{z, -5.0f}}});
  }
  return o;
}

// OpenAI's logprobs on /completions: tokens, their log-probabilities, the
// top alternatives beside the sampled token, and text offsets counted across
// the stream's chunks; on chat, "content" entries with bytes.
TEST(GenerationSession, LogprobsInOpenAisShapesStreamedAndWhole) {
  Fixture f;
  GenerationSession s = f.Open(R"({"model":"m","prompt":[5],"max_tokens":3,"stream":true,"logprobs":1})", false);
  (void)s.TakeEngineRequest();
  auto a = Events(s.OnOutput(WithLogprobs("ab", 10.1, 0)).events);
  auto b = Events(s.OnOutput(WithLogprobs("c", 10.2, 2, true)).events);
  const json::value& la = a.at(0).at("choices").at(0).at("logprobs");
  EXPECT_EQ(la.at("tokens"), (json::array{"a", "b"}));
  EXPECT_NEAR(la.at("token_logprobs").at(1).as_double(), -0.2, 1e-6);
  EXPECT_NEAR(la.at("top_logprobs").at(0).at("z").as_double(), -5, 1e-6);
  EXPECT_NEAR(la.at("top_logprobs").at(0).at("a").as_double(), -0.1, 1e-6);
  EXPECT_EQ(la.at("text_offset"), (json::array{0, 1}));
  EXPECT_EQ(b.at(0).at("choices").at(0).at("logprobs").at("text_offset"), (json::array{2}));
  EXPECT_TRUE(b.at(1).at("choices").at(0).at("logprobs").is_null());  // the finish chunk carries no token

  GenerationSession whole = f.Open(
      R"({"model":"m","messages":[{"role":"user","content":"hi"}],"max_tokens":3,"logprobs":true,"top_logprobs":1})",
      true);
  (void)whole.TakeEngineRequest();
  whole.OnOutput(WithLogprobs("ab", 10.1, 0));
  whole.OnOutput(WithLogprobs("c", 10.2, 2, true));
  const json::value body = json::parse(std::get<std::string>(whole.Finish()));
  const json::array& content = body.at("choices").at(0).at("logprobs").at("content").as_array();
  ASSERT_EQ(content.size(), 3u);
  EXPECT_EQ(content[2].at("token").as_string(), "c");
  EXPECT_NEAR(content[2].at("logprob").as_double(), -0.3, 1e-6);
  EXPECT_EQ(content[2].at("bytes"), (json::array{99}));
  EXPECT_EQ(content[2].at("top_logprobs").at(0).at("token").as_string(), "z");

  GenerationSession plain = f.Open(R"({"model":"m","prompt":[5],"max_tokens":3})", false);
  (void)plain.TakeEngineRequest();
  plain.OnOutput(Output("abc", 10.1, true, FinishReason::kLength));
  EXPECT_TRUE(json::parse(std::get<std::string>(plain.Finish())).at("choices").at(0).at("logprobs").is_null());
}

TEST(GenerationSession, EngineRequestFromTheBody) {
  Fixture f;
  GenerationSession s = f.Open(R"({"model":"m","prompt":[5,6,7],"max_tokens":100,"priority":-2})", false, "offline");
  EXPECT_EQ(s.max_tokens(), 64 - 3);  // clamped to what the model length leaves
  const Request r = s.TakeEngineRequest();
  EXPECT_EQ(r.id, 7);
  EXPECT_EQ(r.token_ids, (std::vector<int32_t>{5, 6, 7}));
  EXPECT_EQ(r.sampling.max_tokens, 61);
  EXPECT_EQ(r.sampling.seed, 99u);  // the server's seed when the request names none
  EXPECT_EQ(r.priority, -2);
  EXPECT_TRUE(r.offline);  // the x-goodput-class header names an offline class
  EXPECT_EQ(r.arrival_time, 0.0);  // EngineService::Submit stamps it as the request reaches the engine
}

TEST(GenerationSession, ChatStreamIsOpenAisChunksThenUsageThenDone) {
  Fixture f;
  GenerationSession s = f.Open(
      R"({"model":"m","messages":[{"role":"user","content":"hi"}],"max_tokens":3,"stream":true,
          "stream_options":{"include_usage":true}})",
      true);
  const Request r = s.TakeEngineRequest();
  auto a = s.OnOutput(Output("ab", 10.5));
  auto b = s.OnOutput(Output("c", 10.7, true, FinishReason::kLength));
  EXPECT_FALSE(a.finished);
  EXPECT_TRUE(b.finished);
  auto first = Events(a.events);
  ASSERT_EQ(first.size(), 1u);
  EXPECT_EQ(first[0].at("object").as_string(), "chat.completion.chunk");
  EXPECT_EQ(first[0].at("id").as_string(), "chatcmpl-7");
  EXPECT_EQ(first[0].at("created").as_int64(), 1700000000);
  EXPECT_EQ(first[0].at("choices").at(0).at("delta").at("role").as_string(), "assistant");
  EXPECT_EQ(first[0].at("choices").at(0).at("delta").at("content").as_string(), "ab");
  EXPECT_TRUE(first[0].at("choices").at(0).at("finish_reason").is_null());
  auto last = Events(b.events);
  ASSERT_EQ(last.size(), 2u);  // the text, then the finish chunk
  EXPECT_FALSE(last[0].at("choices").at(0).at("delta").as_object().contains("role"));
  EXPECT_EQ(last[1].at("choices").at(0).at("finish_reason").as_string(), "length");
  auto rest = Events(std::get<std::string>(s.Finish()));
  ASSERT_EQ(rest.size(), 2u);
  EXPECT_TRUE(rest[0].at("choices").as_array().empty());
  EXPECT_EQ(rest[0].at("usage").at("prompt_tokens").as_int64(), static_cast<int64_t>(r.token_ids.size()));
  EXPECT_EQ(rest[0].at("usage").at("completion_tokens").as_int64(), 3);
  EXPECT_EQ(rest[1].as_string(), "[DONE]");
  auto l = s.latencies();
  ASSERT_TRUE(l.has_value());
  EXPECT_NEAR(l->ttft, 0.5, 1e-12);
  EXPECT_NEAR(l->tpot, 0.1, 1e-12);  // (10.7 - 10.5) / (3 - 1)
  EXPECT_NEAR(l->e2e, 0.7, 1e-12);
}

// continuous_usage_stats (as vLLM): every chunk carries the counts so far.
TEST(GenerationSession, ContinuousUsageCountsEveryChunk) {
  Fixture f;
  GenerationSession s = f.Open(R"({"model":"m","prompt":[5],"max_tokens":4,"stream":true,
      "stream_options":{"include_usage":true,"continuous_usage_stats":true}})", false);
  s.TakeEngineRequest();
  auto a = Events(s.OnOutput(Output("ab", 1)).events);
  auto b = Events(s.OnOutput(Output("cd", 2, true, FinishReason::kLength)).events);
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].at("usage").at("completion_tokens").as_int64(), 2);
  EXPECT_EQ(a[0].at("usage").at("prompt_tokens").as_int64(), 1);
  ASSERT_EQ(b.size(), 2u);
  EXPECT_EQ(b[0].at("usage").at("completion_tokens").as_int64(), 4);
}

// A step whose tokens show no text yet (the first byte of a UTF-8
// character) or none at all (special ids) still streams a chunk, with text
// "" and the usage that counts them, as vLLM does: a client learns its first
// token when it comes, not when text does.
TEST(GenerationSession, TokensWithoutTextStillStreamAChunk) {
  Fixture f;
  GenerationSession s = f.Open(R"({"model":"m","prompt":[5],"max_tokens":4,"stream":true,
      "stream_options":{"include_usage":true,"continuous_usage_stats":true}})", false);
  s.TakeEngineRequest();
  RequestOutput held = Output("\xc3", 1);  // the first of two bytes
  auto a = Events(s.OnOutput(held).events);
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].at("choices").at(0).at("text").as_string(), "");
  EXPECT_EQ(a[0].at("usage").at("completion_tokens").as_int64(), 1);
  RequestOutput special;
  special.id = 7, special.new_token_ids = {1}, special.num_new_tokens = 1, special.time = 2;  // BOS: no bytes
  auto b = Events(s.OnOutput(special).events);
  ASSERT_EQ(b.size(), 1u);
  EXPECT_EQ(b[0].at("usage").at("completion_tokens").as_int64(), 2);
  auto c = Events(s.OnOutput(Output("\xa9", 3)).events);  // completes the character
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].at("choices").at(0).at("text").as_string(), "\xc3\xa9");
}

TEST(GenerationSession, OneJsonResponseWithoutStream) {
  Fixture f;
  GenerationSession s = f.Open(R"({"model":"m","prompt":"x","max_tokens":4})", false);
  s.TakeEngineRequest();
  EXPECT_TRUE(s.OnOutput(Output("he", 1)).events.empty());  // nothing streams
  s.OnOutput(Output("y", 2, true, FinishReason::kLength));
  const json::value body = json::parse(std::get<std::string>(s.Finish()));
  EXPECT_EQ(body.at("object").as_string(), "text_completion");
  EXPECT_EQ(body.at("choices").at(0).at("text").as_string(), "hey");
  EXPECT_EQ(body.at("choices").at(0).at("finish_reason").as_string(), "length");
  EXPECT_EQ(body.at("usage").at("total_tokens").as_int64(), 2 + 3);  // BOS + "x", then 3 tokens
}

TEST(GenerationSession, StopStringAbortsAndFinishesWithStop) {
  Fixture f;
  GenerationSession s = f.Open(R"({"model":"m","prompt":"x","max_tokens":20,"stop":["END"],"stream":true})", false);
  s.TakeEngineRequest();
  auto u = s.OnOutput(Output("ok END more", 1));
  EXPECT_TRUE(u.abort);  // the engine should stop generating
  auto done = s.OnOutput(Output("", 1.1, true, FinishReason::kAborted));
  auto events = Events(u.events + done.events);
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].at("choices").at(0).at("text").as_string(), "ok ");
  EXPECT_EQ(events[1].at("choices").at(0).at("finish_reason").as_string(), "stop");
}

TEST(GenerationSession, RejectedRequestStreamsNothingAndIsA400) {
  Fixture f;
  GenerationSession s = f.Open(R"({"model":"m","prompt":"x","max_tokens":4,"stream":true})", false);
  s.TakeEngineRequest();
  auto u = s.OnOutput(Output("", 0, true, FinishReason::kRejected));
  EXPECT_TRUE(u.events.empty());
  auto e = std::get<ApiError>(s.Finish());
  EXPECT_EQ(e.http_status, 400);
  EXPECT_NE(e.message.find("more KV cache"), std::string::npos);
  EXPECT_FALSE(s.latencies().has_value());
}

TEST(GenerationSession, BadRequestsAreRefusedWithTheirStatus) {
  Fixture f;
  EXPECT_EQ(f.Refuse(R"({"model":"other","prompt":"x"})").http_status, 404);
  EXPECT_EQ(f.Refuse(R"({"model":"m","prompt":"x")").http_status, 400);  // broken JSON
  EXPECT_NE(f.Refuse(R"({"model":"m","prompt":[1,900]})").message.find("token id 900"), std::string::npos);
  EXPECT_EQ(f.Refuse(std::string(R"({"model":"m","prompt":")") + std::string(100, 'a') + "\"}").param, "prompt");
}

}  // namespace
}  // namespace goodput::server
