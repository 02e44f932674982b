// A loopback OpenAI-style SSE server whose answers are known in advance, for
// testing and benchmarking the client: every request streams `max_tokens`
// one-token chunks, the first after `ttft_s` and the rest `itl_s` apart,
// then a usage chunk and [DONE]. The request's "model" field picks a fault
// instead: "fail-500" (HTTP 500 with an error JSON), "not-sse" (a plain JSON
// answer), "malformed" (a broken data line), "cut" (closes after 2 tokens),
// "stall" (sends nothing more after the headers), "no-usage" (no usage
// chunk), "usage-lies" (usage says one more token than sent). It runs on its
// own thread and records when it wrote each token, per request (by the
// client's x-goodput-request header).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "core/clock.h"
#include "core/status.h"

namespace goodput::testing {

class FakeSseServer {
 public:
  struct Options {
    double ttft_s = 0.01;
    double itl_s = 0.005;
  };
  // Listens on 127.0.0.1 (a free port) and starts its thread.
  static Result<std::unique_ptr<FakeSseServer>> Start(Options options, const Clock& clock);
  ~FakeSseServer();

  uint16_t port() const;
  // When the token chunks of request `index` (the x-goodput-request header)
  // were written: the clock just before and just after each write call (the
  // bytes reached the client's socket somewhere in between).
  struct TokenWrite {
    double before = 0, after = 0;
  };
  std::vector<TokenWrite> TokenWrites(int64_t index) const;

 private:
  struct Impl;
  explicit FakeSseServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace goodput::testing
