// A loopback OpenAI-style SSE server whose answers are known in advance, for
// testing and benchmarking the client: every request streams `max_tokens`
// one-token chunks, the first after `ttft_s` and the rest `itl_s` apart,
// then a usage chunk and [DONE]. The request's "model" field picks a fault
// instead: "fail-500" (HTTP 500 with an error JSON), "not-sse" (a plain JSON
// answer), "malformed" (a broken data line), "cut" (closes after 2 tokens),
// "stall" (sends nothing more after the headers), "no-usage" (no usage
// chunk), "usage-lies" (usage says one more token than sent), "no-done"
// (ends cleanly after the usage chunk without [DONE]), "huge-line" (a 2 MiB
// line that never ends), "two-per-chunk" (every chunk carries two tokens and
// continuous usage, as vLLM's continuous_usage_stats), "usage-on-last" (the
// last token chunk carries the total usage, nothing before), "no-text" (every
// token chunk's text is empty, its continuous usage counts it), "no-text-at-
// all" (empty texts, usage only at the end), "huge-chunk-line" (a chunked
// response whose first chunk-size line never ends: 4 MiB of extension). GET /metrics is a 404 unless
// Options::spec_decode_metrics. It runs on its own
// thread and records, per request (by the client's x-goodput-request header),
// when it wrote each token and what the request said about its class.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "core/clock.h"
#include "core/status.h"

namespace goodput::testing {

class FakeSseServer {
 public:
  struct Options {
    double ttft_s = 0.01;
    double itl_s = 0.005;
    // Keep connections open between requests (chunked responses) and close
    // one that stays idle this long (0: never), as servers' keep-alive
    // timeouts do. Without keep-alive every response ends by closing.
    bool keep_alive = false;
    double idle_close_s = 0;
    // Serve GET /metrics with vLLM's speculative decoding counters, each
    // answered request adding 10 drafts of 8 tokens with 24 accepted (vLLM's
    // acceptance 0.3, mean acceptance length 3.4).
    bool spec_decode_metrics = false;
    // The stream's shape (the "ok" model; the faults keep theirs): tokens
    // per chunk (the last may carry fewer), where usage comes, whether
    // [DONE] ends the stream and whether the last token chunk carries
    // finish_reason "length" (as the OpenAI API's and vLLM's do).
    enum class Usage { kAtEnd, kEveryChunk, kNone };
    int tokens_per_chunk = 1;
    Usage usage = Usage::kAtEnd;
    bool send_done = true;
    bool finish_reason = true;
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

  // What request `index` said: its x-goodput-class header and body priority.
  struct Seen {
    std::string class_header;
    std::optional<int64_t> priority;
  };
  std::optional<Seen> SeenRequest(int64_t index) const;
  // Connections accepted so far, and those the server closed for idling.
  int64_t connections() const;
  int64_t idle_closes() const;

 private:
  struct Impl;
  explicit FakeSseServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace goodput::testing
