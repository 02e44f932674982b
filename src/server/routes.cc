#include "server/routes.h"

#include <boost/json.hpp>
#include <fmt/format.h>

namespace goodput::server {
namespace http = boost::beast::http;
namespace json = boost::json;
namespace {

struct RouteSpec {
  const char* path;
  const char* allow;  // the methods, as the Allow header lists them
  bool get;           // GET and HEAD (else POST)
};
constexpr RouteSpec kRoutes[] = {
    {"/health", "GET, HEAD", true},
    {"/metrics", "GET, HEAD", true},
    {"/v1/models", "GET, HEAD", true},
    {"/v1/completions", "POST", false},
    {"/v1/chat/completions", "POST", false},
};

bool EqualsIgnoringCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i]))) return false;
  }
  return true;
}

// Compares every byte whatever the first difference (no early exit).
bool ConstantTimeEquals(std::string_view a, std::string_view b) {
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  for (size_t i = 0; i < a.size(); ++i) {
    diff |= static_cast<unsigned char>(a[i] ^ (i < b.size() ? b[i] : 0));
  }
  return diff == 0;
}

HttpResponse Models(const HttpRequest& req, const ServedModel& model) {
  json::object m{{"id", model.name}, {"object", "model"}, {"created", 0}, {"owned_by", "goodput"},
                 {"max_model_len", model.max_model_len}};
  const json::object body{{"object", "list"}, {"data", json::array{m}}};
  return TextResponse(req, http::status::ok, json::serialize(body), "application/json");
}

HttpResponse GetRoute(const Routes& routes, const HttpRequest& req, std::string_view path) {
  if (path == "/health") return TextResponse(req, http::status::ok, "", "text/plain");
  if (path == "/metrics")
    return TextResponse(req, http::status::ok, routes.metrics_text(), "text/plain; version=0.0.4");
  return Models(req, *routes.model);
}

}  // namespace

HttpResponse TextResponse(const HttpRequest& req, http::status status, std::string body, const char* type) {
  HttpResponse res{status, req.version()};
  res.set(http::field::server, "goodput");
  res.set(http::field::content_type, type);
  res.keep_alive(req.keep_alive());
  res.body() = std::move(body);
  res.prepare_payload();
  return res;
}

HttpResponse ErrorResponse(const HttpRequest& req, const ApiError& e) {
  return TextResponse(req, static_cast<http::status>(e.http_status), e.ToJson(), "application/json");
}

bool Authorized(const HttpRequest& req, const std::string& key) {
  const std::string_view value = req[http::field::authorization];
  const size_t space = value.find(' ');
  if (space == std::string_view::npos || !EqualsIgnoringCase(value.substr(0, space), "bearer")) return false;
  std::string_view token = value.substr(space + 1);
  while (!token.empty() && token.front() == ' ') token.remove_prefix(1);
  return ConstantTimeEquals(token, key);
}

std::optional<HttpResponse> Answer(const Routes& routes, const HttpRequest& req, Generation* generation) {
  *generation = Generation::kNone;
  const std::string_view path = req.target().substr(0, req.target().find('?'));
  const RouteSpec* route = nullptr;
  for (const RouteSpec& r : kRoutes) route = path == r.path ? &r : route;
  if (!route)
    return ErrorResponse(req, ApiError{404, fmt::format("no route {}", path), "invalid_request_error", "", ""});
  const bool is_get = req.method() == http::verb::get || req.method() == http::verb::head;
  if (route->get != is_get || (!route->get && req.method() != http::verb::post)) {
    HttpResponse res = ErrorResponse(req, ApiError{405, fmt::format("{} does not allow {}", path,
                                                                    std::string(req.method_string())),
                                                   "invalid_request_error", "", ""});
    res.set(http::field::allow, route->allow);
    return res;
  }
  if (path.starts_with("/v1/") && !routes.api_key.empty() && !Authorized(req, routes.api_key)) {
    return ErrorResponse(req, ApiError{401, "Incorrect or missing API key: send 'Authorization: Bearer <key>'",
                                       "invalid_request_error", "", "invalid_api_key"});
  }
  if (!route->get) {
    *generation = path == "/v1/completions" ? Generation::kCompletions : Generation::kChatCompletions;
    return std::nullopt;
  }
  HttpResponse res = GetRoute(routes, req, path);
  if (req.method() == http::verb::head) res.body().clear();  // Content-Length stays what GET would send
  return res;
}

std::optional<HttpResponse> ReadErrorResponse(const boost::system::error_code& ec, int64_t body_limit) {
  HttpRequest req;
  req.version(11);
  req.keep_alive(false);
  std::optional<HttpResponse> res;
  if (ec == http::error::body_limit) {
    res = ErrorResponse(req, ApiError{413, fmt::format("the request body exceeds {} bytes", body_limit),
                                      "invalid_request_error", "", ""});
  } else if (ec == http::error::header_limit) {
    res =
        ErrorResponse(req, ApiError{431, "the request's header fields are too large", "invalid_request_error", "", ""});
  } else if (ec.category() == http::make_error_code(http::error::bad_method).category() &&
             ec != http::error::end_of_stream && ec != http::error::partial_message && ec != http::error::need_more) {
    res = ErrorResponse(req, ApiError{400, "malformed HTTP request: " + ec.message(), "invalid_request_error", "", ""});
  }
  if (res) res->keep_alive(false);
  return res;
}

}  // namespace goodput::server
