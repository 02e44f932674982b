// The HTTP API's routes as plain functions from a request to a response, so
// that every status and header is testable without a socket: /health,
// /metrics and /v1/models (GET and HEAD: HEAD is GET without the body), 404
// for unknown paths, 405 with Allow for a wrong method, 401 without the API
// key, and the statuses for requests that cannot be parsed (413, 431, 400).
// The two generation routes are only recognised here; http_server.cc streams
// them through a GenerationSession.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include <boost/beast/http.hpp>

#include "server/generation.h"
#include "server/openai_request.h"

namespace goodput::server {

using HttpRequest = boost::beast::http::request<boost::beast::http::string_body>;
using HttpResponse = boost::beast::http::response<boost::beast::http::string_body>;

// A response with `body` of content type `type`, keeping the connection when
// the request allows it.
HttpResponse TextResponse(const HttpRequest& req, boost::beast::http::status status, std::string body,
                          const char* type);
// OpenAI's error JSON with the error's status.
HttpResponse ErrorResponse(const HttpRequest& req, const ApiError& e);

// Whether `req` carries `key` as "Authorization: Bearer KEY" (the scheme in
// any case, as RFC 7235 has it; the key compared in constant time, so its
// bytes cannot be guessed one by one from response times).
bool Authorized(const HttpRequest& req, const std::string& key);

struct Routes {
  const ServedModel* model = nullptr;
  std::string api_key;                // empty: no authentication
  std::function<std::string()> metrics_text;
};

enum class Generation { kNone, kCompletions, kChatCompletions };

// The answer to `req`, or nothing for a generation request (then
// `generation` says which; the caller streams it).
std::optional<HttpResponse> Answer(const Routes& routes, const HttpRequest& req, Generation* generation);

// The answer to a request that could not be read (`ec` from the parser):
// 413 over the body limit, 431 over the header limit, 400 when malformed;
// nothing when the client closed, went idle or was cut off. The connection is
// closed after it.
std::optional<HttpResponse> ReadErrorResponse(const boost::system::error_code& ec, int64_t body_limit);

}  // namespace goodput::server
