// The API's statuses and headers, request by request, without a socket.
#include "server/routes.h"

#include <boost/json.hpp>
#include <gtest/gtest.h>

namespace goodput::server {
namespace {

namespace http = boost::beast::http;

struct Fixture {
  ByteTokenizer tok;
  ServedModel model{"m", 64, &tok, {"offline"}};
  Routes routes{&model, "s3cret", [] { return std::string("vllm:num_requests_running 0\n"); }};

  HttpResponse Get(http::verb method, const std::string& target, const std::string& auth = "") {
    HttpRequest req{method, target, 11};
    if (!auth.empty()) req.set(http::field::authorization, auth);
    Generation g;
    auto res = Answer(routes, req, &g);
    EXPECT_TRUE(res.has_value()) << target;
    return res ? *res : HttpResponse{};
  }
};

TEST(Routes, HeadIsGetWithoutTheBody) {
  Fixture f;
  const HttpResponse get = f.Get(http::verb::get, "/metrics");
  const HttpResponse head = f.Get(http::verb::head, "/metrics");
  EXPECT_EQ(get.result_int(), 200);
  EXPECT_EQ(head.result_int(), 200);
  EXPECT_FALSE(get.body().empty());
  EXPECT_TRUE(head.body().empty());
  EXPECT_EQ(head[http::field::content_length], std::to_string(get.body().size()));  // what GET would send
}

TEST(Routes, WrongMethodIs405WithAllow) {
  Fixture f;
  const HttpResponse get_gen = f.Get(http::verb::get, "/v1/completions", "Bearer s3cret");
  EXPECT_EQ(get_gen.result_int(), 405);
  EXPECT_EQ(get_gen[http::field::allow], "POST");
  const HttpResponse post_models = f.Get(http::verb::post, "/v1/models", "Bearer s3cret");
  EXPECT_EQ(post_models.result_int(), 405);
  EXPECT_EQ(post_models[http::field::allow], "GET, HEAD");
  EXPECT_EQ(f.Get(http::verb::get, "/nowhere").result_int(), 404);
}

// The scheme is case-insensitive (RFC 7235); the key is not.
TEST(Routes, BearerInAnyCaseAndOnlyTheExactKey) {
  Fixture f;
  EXPECT_EQ(f.Get(http::verb::get, "/v1/models", "Bearer s3cret").result_int(), 200);
  EXPECT_EQ(f.Get(http::verb::get, "/v1/models", "bearer s3cret").result_int(), 200);
  EXPECT_EQ(f.Get(http::verb::get, "/v1/models", "BEARER  s3cret").result_int(), 200);
  for (const char* wrong : {"Bearer S3CRET", "Bearer s3cre", "Bearer s3crett", "Basic s3cret", "s3cret", ""}) {
    const HttpResponse r = f.Get(http::verb::get, "/v1/models", wrong);
    EXPECT_EQ(r.result_int(), 401) << wrong;
    EXPECT_NE(r.body().find("invalid_api_key"), std::string::npos);
  }
  EXPECT_EQ(f.Get(http::verb::get, "/health").result_int(), 200);  // health needs no key
}

TEST(Routes, GenerationRoutesAreLeftToTheStream) {
  Fixture f;
  HttpRequest req{http::verb::post, "/v1/chat/completions", 11};
  req.set(http::field::authorization, "Bearer s3cret");
  Generation g = Generation::kNone;
  EXPECT_FALSE(Answer(f.routes, req, &g).has_value());
  EXPECT_EQ(g, Generation::kChatCompletions);
}

TEST(Routes, UnreadableRequestsGetTheirStatus) {
  EXPECT_EQ(ReadErrorResponse(http::error::header_limit, 1)->result_int(), 431);
  EXPECT_EQ(ReadErrorResponse(http::error::body_limit, 8)->result_int(), 413);
  const auto bad = ReadErrorResponse(http::error::bad_method, 8);
  ASSERT_TRUE(bad.has_value());
  EXPECT_EQ(bad->result_int(), 400);
  EXPECT_FALSE(bad->keep_alive());
  EXPECT_FALSE(ReadErrorResponse(http::error::end_of_stream, 8).has_value());  // the client closed
  EXPECT_FALSE(ReadErrorResponse(boost::beast::error::timeout, 8).has_value());  // idle
}

}  // namespace
}  // namespace goodput::server
