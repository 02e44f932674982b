#include "server/openai_request.h"

#include <boost/json.hpp>
#include <gtest/gtest.h>

namespace goodput::server {
namespace {

GenerationRequest Ok(const std::string& body, bool chat = false, const std::string& header = "") {
  auto r = ParseGenerationRequest(body, chat, header);
  if (auto* e = std::get_if<ApiError>(&r)) {
    ADD_FAILURE() << e->message;
    return {};
  }
  return std::get<GenerationRequest>(r);
}

ApiError Err(const std::string& body, bool chat = false) {
  auto r = ParseGenerationRequest(body, chat, "");
  if (!std::holds_alternative<ApiError>(r)) {
    ADD_FAILURE() << "accepted: " << body;
    return {};
  }
  return std::get<ApiError>(r);
}

TEST(OpenAiRequest, CompletionWithTextAndOptions) {
  GenerationRequest r = Ok(R"({"model": "m", "prompt": "hi", "max_tokens": 5, "min_tokens": 2, "temperature": 0.7,
      "top_p": 0.9, "top_k": 40, "seed": 3, "ignore_eos": true, "stop": ["\n", "END"], "stream": true,
      "stream_options": {"include_usage": true}, "priority": -1, "class": "batch"})");
  EXPECT_EQ(r.prompt_text, "hi");
  EXPECT_EQ(r.sampling.max_tokens, 5);
  EXPECT_EQ(r.sampling.min_tokens, 2);
  EXPECT_DOUBLE_EQ(r.sampling.temperature, 0.7);
  EXPECT_EQ(r.sampling.top_k, 40);
  EXPECT_EQ(*r.seed, 3u);
  EXPECT_TRUE(r.sampling.ignore_eos);
  EXPECT_EQ(r.stop.size(), 2u);
  EXPECT_TRUE(r.stream && r.include_usage);
  EXPECT_EQ(r.priority, -1);
  EXPECT_EQ(r.request_class, "batch");
}

TEST(OpenAiRequest, TokenIdPromptsAndDefaults) {
  GenerationRequest r = Ok(R"({"model": "m", "prompt": [1, 2, 300]})");
  EXPECT_EQ(r.prompt_ids, (std::vector<int32_t>{1, 2, 300}));
  EXPECT_EQ(r.sampling.max_tokens, 16);  // OpenAI's default for completions
  EXPECT_DOUBLE_EQ(r.sampling.temperature, 0);
  EXPECT_FALSE(r.stream);
}

TEST(OpenAiRequest, ChatMessagesAndTheClassHeader) {
  GenerationRequest r = Ok(R"({"model": "m", "messages": [{"role": "system", "content": "be brief"},
      {"role": "user", "content": "hi"}], "max_completion_tokens": 9, "class": "batch"})",
                           true, "interactive");
  ASSERT_EQ(r.messages.size(), 2u);
  EXPECT_EQ(r.messages[1].content, "hi");
  EXPECT_EQ(r.sampling.max_tokens, 9);
  EXPECT_EQ(r.request_class, "interactive");  // the header wins
}

// Chat content as a list of text parts (the OpenAI and vLLM form) is the
// parts' text joined by newlines; a part of another kind is a 400.
TEST(OpenAiRequest, ChatContentMayBeAListOfTextParts) {
  GenerationRequest r = Ok(R"({"model": "m", "messages": [{"role": "user", "content": [
      {"type": "text", "text": "first"}, {"type": "text", "text": "second"}]}]})",
                           true);
  ASSERT_EQ(r.messages.size(), 1u);
  EXPECT_EQ(r.messages[0].content, "first\nsecond");
  for (const char* content : {R"([{"type": "image_url", "image_url": {"url": "x"}}])", R"([{"type": "text"}])",
                              R"(["text"])", R"(7)"}) {
    const ApiError e = Err(std::string(R"({"model": "m", "messages": [{"role": "user", "content": )") + content + "}]}",
                           true);
    EXPECT_EQ(e.param, "messages") << content;
    EXPECT_EQ(e.http_status, 400) << content;
  }
}

TEST(OpenAiRequest, BrokenBodiesNameTheParameter) {
  auto expect = [](const ApiError& e, const std::string& param, const std::string& needle) {
    EXPECT_EQ(e.http_status, 400);
    EXPECT_EQ(e.param, param);
    EXPECT_NE(e.message.find(needle), std::string::npos) << e.message;
  };
  expect(Err("{nope"), "", "not valid JSON");
  expect(Err("[1]"), "", "JSON object");
  expect(Err(R"({"prompt": "x"})"), "model", "'model' must be a string");
  expect(Err(R"({"model": "m"})"), "prompt", "'prompt' is required");
  expect(Err(R"({"model": "m", "prompt": ""})"), "prompt", "empty");
  expect(Err(R"({"model": "m", "prompt": ["a", "b"]})"), "prompt", "one prompt per request");
  expect(Err(R"({"model": "m", "prompt": [1, -2]})"), "prompt", "non-negative");
  expect(Err(R"({"model": "m", "prompt": "x", "max_tokens": "5"})"), "max_tokens", "must be an integer");
  expect(Err(R"({"model": "m", "prompt": "x", "max_tokens": 0})"), "max_tokens", "between 1");
  expect(Err(R"({"model": "m", "prompt": "x", "temperature": 3})"), "temperature", "between 0 and 2");
  expect(Err(R"({"model": "m", "prompt": "x", "max_tokens": 2, "min_tokens": 3})"), "min_tokens", "must not exceed");
  expect(Err(R"({"model": "m", "prompt": "x", "stream": "yes"})"), "stream", "true or false");
  expect(Err(R"({"model": "m", "prompt": "x", "stop": [1]})"), "stop", "list of strings");
  expect(Err(R"({"model": "m", "messages": []})", true), "messages", "non-empty list");
  expect(Err(R"({"model": "m", "messages": [{"role": "robot", "content": "x"}]})", true), "messages", "unknown role");
  expect(Err(R"({"model": "m", "messages": [{"role": "user"}]})", true), "messages", "needs a 'content'");
}

// Parameters goodput serve does not implement are refused by name, unless
// they ask for what it does anyway.
TEST(OpenAiRequest, UnsupportedParametersAreRefusedByName) {
  const std::string base = R"({"model": "m", "prompt": "x", )";
  for (const auto& [field, param] : std::vector<std::pair<std::string, std::string>>{
           {R"("n": 2)", "n"},
           {R"("best_of": 3)", "best_of"},
           {R"("echo": true)", "echo"},
           {R"("tools": [{"type": "function"}])", "tools"},
           {R"("response_format": {"type": "json_object"})", "response_format"},
           {R"("presence_penalty": 0.5)", "presence_penalty"},
           {R"("frequency_penalty": -1)", "frequency_penalty"},
           {R"("repetition_penalty": 1.1)", "repetition_penalty"},
           {R"("logit_bias": {"50256": -100})", "logit_bias"},
           {R"("min_p": 0.05)", "min_p"},
           {R"("stop_token_ids": [2])", "stop_token_ids"},
           {R"("suffix": "end")", "suffix"},
           {R"("tool_choice": "auto")", "tool_choice"},
           {R"("functions": [{"name": "f"}])", "functions"},
           {R"("guided_json": {"type": "object"})", "guided_json"},
           {R"("prompt_logprobs": 0)", "prompt_logprobs"}}) {
    const ApiError e = Err(base + field + "}");
    EXPECT_EQ(e.http_status, 400) << field;
    EXPECT_EQ(e.param, param) << field;
    EXPECT_NE(e.message.find("'" + param + "' is not supported"), std::string::npos) << e.message;
  }
  for (const char* fine : {R"("n": 1)", R"("best_of": 1)", R"("logprobs": null)", R"("logprobs": false)",
                           R"("echo": false)", R"("tools": [])", R"("response_format": {"type": "text"})",
                           R"("presence_penalty": 0)", R"("frequency_penalty": 0.0)", R"("repetition_penalty": 1)",
                           R"("logit_bias": {})", R"("min_p": 0)", R"("stop_token_ids": [])", R"("suffix": "")",
                           R"("tool_choice": "none")", R"("functions": [])", R"("guided_json": null)",
                           R"("prompt_logprobs": null)"}) {
    Ok(base + fine + "}");
  }
}

// OpenAI's log-probabilities: a count on /completions (0: the sampled
// token's alone), a flag and a count on chat; out of range, of the wrong
// type or on the wrong endpoint, a 400 naming the field.
TEST(OpenAiRequest, LogprobsAreACountOnCompletionsAndAFlagOnChat) {
  const std::string base = R"({"model": "m", "prompt": "x")";
  EXPECT_EQ(Ok(base + "}").sampling.logprobs, -1);
  EXPECT_EQ(Ok(base + R"(, "logprobs": null})").sampling.logprobs, -1);
  EXPECT_EQ(Ok(base + R"(, "logprobs": false})").sampling.logprobs, -1);
  EXPECT_EQ(Ok(base + R"(, "logprobs": 0})").sampling.logprobs, 0);
  EXPECT_EQ(Ok(base + R"(, "logprobs": 5})").sampling.logprobs, 5);
  const std::string chat = R"({"model": "m", "messages": [{"role": "user", "content": "x"}])";
  EXPECT_EQ(Ok(chat + "}", true).sampling.logprobs, -1);
  EXPECT_EQ(Ok(chat + R"(, "logprobs": true})", true).sampling.logprobs, 0);
  EXPECT_EQ(Ok(chat + R"(, "logprobs": true, "top_logprobs": 3})", true).sampling.logprobs, 3);
  EXPECT_EQ(Ok(chat + R"(, "logprobs": false, "top_logprobs": 0})", true).sampling.logprobs, -1);
  const auto expect = [](const ApiError& e, const std::string& param, const std::string& says) {
    EXPECT_EQ(e.http_status, 400);
    EXPECT_EQ(e.param, param);
    EXPECT_NE(e.message.find(says), std::string::npos) << e.message;
  };
  expect(Err(base + R"(, "logprobs": 21})"), "logprobs", "between 0 and 20");
  expect(Err(base + R"(, "logprobs": -1})"), "logprobs", "between 0 and 20");
  expect(Err(base + R"(, "logprobs": true})"), "logprobs", "number of top tokens");
  expect(Err(base + R"(, "logprobs": "5"})"), "logprobs", "must be an integer");
  expect(Err(base + R"(, "top_logprobs": 2})"), "top_logprobs", "for /chat/completions");
  expect(Err(chat + R"(, "logprobs": 1})", true), "logprobs", "true or false");
  expect(Err(chat + R"(, "top_logprobs": 2})", true), "top_logprobs", "needs 'logprobs': true");
  expect(Err(chat + R"(, "logprobs": true, "top_logprobs": 99})", true), "top_logprobs", "between 0 and 20");
}

// max_completion_tokens replaces max_tokens in chat, except when it is null.
TEST(OpenAiRequest, NullMaxCompletionTokensFallsBackToMaxTokens) {
  const std::string msgs = R"("messages": [{"role": "user", "content": "x"}])";
  EXPECT_EQ(Ok(R"({"model": "m", )" + msgs + R"(, "max_completion_tokens": null, "max_tokens": 9})", true)
                .sampling.max_tokens,
            9);
  EXPECT_EQ(
      Ok(R"({"model": "m", )" + msgs + R"(, "max_completion_tokens": 7, "max_tokens": 9})", true).sampling.max_tokens,
      7);
  EXPECT_TRUE(Ok(R"({"model": "m", "prompt": "x", "stream": true, "stream_options": {"continuous_usage_stats": true}})")
                  .continuous_usage);
}

TEST(OpenAiRequest, ErrorJsonHasOpenAisShape) {
  ApiError e;
  e.message = "bad";
  e.param = "prompt";
  auto doc = boost::json::parse(e.ToJson());
  EXPECT_EQ(doc.at("error").at("message").as_string(), "bad");
  EXPECT_EQ(doc.at("error").at("type").as_string(), "invalid_request_error");
  EXPECT_EQ(doc.at("error").at("param").as_string(), "prompt");
  EXPECT_TRUE(doc.at("error").at("code").is_null());
}

}  // namespace
}  // namespace goodput::server
