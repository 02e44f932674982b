// The OpenAI-compatible HTTP/1.1 server (Boost.Beast, C++20 coroutines):
// POST /v1/completions and /v1/chat/completions (streaming as SSE, or one
// JSON response), GET /v1/models, /health and /metrics. Connections run on
// the io_context; requests go to the EngineService and their outputs come
// back through a channel per request, so no I/O thread touches engine state.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include <boost/asio/io_context.hpp>

#include "core/status.h"
#include "engine/engine_service.h"
#include "server/generation.h"
#include "server/metrics.h"

namespace goodput::server {

struct ServerOptions {
  std::string host = "127.0.0.1";
  uint16_t port = 8000;           // 0: any free port (see Server::port())
  std::string api_key;            // empty: no authentication
  int64_t body_limit = 8 << 20;   // bytes; larger bodies get 413
  int64_t header_limit = 16 << 10;  // bytes of request line and header fields; more gets 431
  int idle_timeout_s = 60;        // a connection idle this long is closed
  int write_timeout_s = 30;       // a client this slow to read is dropped (and its request aborted)
  // Kernel send buffer per connection (0: the kernel's autotuning, up to
  // tcp_wmem's 4 MiB). Bounded so a stalled reader backs up into the server,
  // where write_timeout_s sees it, instead of into megabytes of kernel memory.
  int64_t send_buffer_bytes = 16 << 10;
};

class Server {
 public:
  Server(boost::asio::io_context& ioc, EngineService& engine, ServedModel model, ServerOptions options);
  ~Server();

  // Binds and starts accepting. Errors name the address.
  Status Listen();
  uint16_t port() const;
  // Stops accepting new connections (in-flight requests continue).
  void StopAccepting();

  struct Impl;

 private:
  std::shared_ptr<Impl> impl_;
};

}  // namespace goodput::server
