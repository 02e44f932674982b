// Where an OpenAI-compatible server listens, from a URL such as
// "http://127.0.0.1:8000" or "http://host:8000/v1" (the API prefix defaults
// to /v1).
#pragma once

#include <cstdint>
#include <string>

#include "core/status.h"

namespace goodput::client {

struct Endpoint {
  std::string host = "127.0.0.1";
  uint16_t port = 80;
  bool tls = false;                // https
  std::string api_prefix = "/v1";  // paths are api_prefix + "/completions" etc.
  std::string api_key;             // sent as "Authorization: Bearer KEY" when set
  std::string Url() const;
};

// Parses an http or https URL (ports 80 and 443 by default). Other schemes,
// user info, queries and fragments are refused with a clear message.
Result<Endpoint> ParseEndpoint(const std::string& url);

// GET `path` (e.g. "/metrics") on `e` over plain HTTP with its API key,
// within `timeout_s`: the body of a 200 answer. Errors: no answer, another
// status, an https endpoint (callers use this for side information only).
Result<std::string> HttpGet(const Endpoint& e, const std::string& path, double timeout_s = 2);

// An HTTP answer: its status and body.
struct HttpAnswer {
  int status = 0;
  std::string body;
};

// POST `body` (JSON) to `path` on `e` (http or https; `insecure` accepts any
// certificate) with its API key, within `timeout_s`: the answer whatever its
// status. Errors: no answer (connect, TLS, timeout).
Result<HttpAnswer> HttpPost(const Endpoint& e, const std::string& path, const std::string& body, double timeout_s,
                            bool insecure = false);

}  // namespace goodput::client
