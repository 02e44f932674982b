#include "support/fake_sse_server.h"

#include <chrono>
#include <cstdlib>
#include <optional>
#include <thread>

#include <boost/asio.hpp>
#include <boost/beast.hpp>
#include <boost/json.hpp>
#include <fmt/format.h>

#include "core/asio_names.h"

namespace goodput::testing {
using namespace goodput::asio_names;  // net, beast, http, tcp, awaitable, kNoThrow
namespace json = boost::json;

struct FakeSseServer::Impl {
  Impl(Options o, const Clock& c) : options(o), clock(c), acceptor(ioc) {}
  Options options;
  const Clock& clock;
  net::io_context ioc{1};
  tcp::acceptor acceptor;
  std::thread thread;
  mutable std::mutex mu;  // guards what follows
  std::map<int64_t, std::vector<TokenWrite>> writes;
  std::map<int64_t, Seen> seen;
  int64_t connections = 0, idle_closes = 0;
  int64_t answered = 0;  // requests streamed to their end (the /metrics counters)

  awaitable<void> Accept() {
    while (true) {
      auto [ec, socket] = co_await acceptor.async_accept(kNoThrow);
      if (ec) co_return;
      {
        std::lock_guard<std::mutex> lock(mu);
        ++connections;
      }
      boost::system::error_code ignored;
      socket.set_option(tcp::no_delay(true), ignored);  // each write leaves at once, as a real server's should
      net::co_spawn(ioc, Session(beast::tcp_stream(std::move(socket))), net::detached);
    }
  }

  // Writes `text` as it is, or as one HTTP chunk on a keep-alive response.
  // A plain (blocking) write, so that a token's `after` follows the send call
  // at once: an awaited write would resume later and widen the interval.
  bool Write(beast::tcp_stream& s, const std::string& text, bool chunked) {
    const std::string bytes = chunked ? fmt::format("{:x}\r\n{}\r\n", text.size(), text) : text;
    boost::system::error_code ec;
    net::write(s.socket(), net::buffer(bytes), ec);
    return !ec;
  }

  awaitable<void> Pause(double seconds) {
    net::steady_timer t(ioc, std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                 std::chrono::duration<double>(seconds)));
    co_await t.async_wait(kNoThrow);
  }

  awaitable<void> Session(beast::tcp_stream stream) {
    beast::flat_buffer buffer;
    for (bool first = true;; first = false) {
      http::request<http::string_body> req;
      if (!first && options.idle_close_s > 0) {
        stream.expires_after(std::chrono::duration_cast<std::chrono::steady_clock::duration>(
            std::chrono::duration<double>(options.idle_close_s)));
      }
      auto [ec, n] = co_await http::async_read(stream, buffer, req, kNoThrow);
      if (ec == beast::error::timeout) {
        std::lock_guard<std::mutex> lock(mu);
        ++idle_closes;
      }
      if (ec) co_return;
      stream.expires_never();
      if (!co_await Answer(stream, req)) co_return;
    }
  }

  void Record(int64_t index, const http::request<http::string_body>& req, const json::object* o) {
    Seen s;
    if (auto h = req.find("x-goodput-class"); h != req.end()) s.class_header = std::string(h->value());
    if (o && o->contains("priority") && o->at("priority").is_int64()) s.priority = o->at("priority").as_int64();
    std::lock_guard<std::mutex> lock(mu);
    seen[index] = s;
  }

  // A token chunk with `text`, continuous usage when `completion_tokens` is
  // given, and finish_reason "length" when `last`.
  static std::string Chunk(const std::string& text, std::optional<int64_t> completion_tokens, bool last = false) {
    const std::string usage =
        completion_tokens
            ? fmt::format(",\"usage\":{{\"prompt_tokens\":1,\"completion_tokens\":{}}}", *completion_tokens)
            : std::string();
    return fmt::format("data: {{\"choices\":[{{\"index\":0,\"text\":\"{}\"{}}}]{}}}\n\n", text,
                       last ? ",\"finish_reason\":\"length\"" : "", usage);
  }

  // The chunk that brings the answer's tokens up to `sent` of `tokens`, `k` of them new.
  std::string TokenChunk(const std::string& mode, int64_t sent, int64_t tokens, int64_t k) const {
    if (mode == "usage-on-last" && sent == tokens) return Chunk("x", tokens);
    if (mode == "no-text") return Chunk("", sent);
    if (mode == "no-text-at-all") return Chunk("", std::nullopt);
    if (mode == "two-per-chunk") return Chunk("xy", sent);
    const bool every = options.usage == Options::Usage::kEveryChunk;
    const bool last = options.finish_reason && sent == tokens;
    return Chunk(std::string(k, 'x'), every ? std::optional(sent) : std::nullopt, last);
  }

  // GET /metrics: vLLM's counters (one labelled series each), or a 404.
  bool Metrics(beast::tcp_stream& s) {
    std::string page;
    if (options.spec_decode_metrics) {
      std::lock_guard<std::mutex> lock(mu);
      page = fmt::format(
          "vllm:spec_decode_num_drafts_total{{engine=\"0\"}} {}\n"
          "vllm:spec_decode_num_draft_tokens_total{{engine=\"0\"}} {}\n"
          "vllm:spec_decode_num_accepted_tokens_total{{engine=\"0\"}} {}\n",
          10 * answered, 80 * answered, 24 * answered);
    }
    const std::string status = options.spec_decode_metrics ? "200 OK" : "404 Not Found";
    Write(s, fmt::format("HTTP/1.1 {}\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{}",
                         status, page.size(), page),
          false);
    return false;  // Connection: close
  }

  // Streams the answer; false when the connection is finished.
  awaitable<bool> Answer(beast::tcp_stream& s, const http::request<http::string_body>& req) {
    if (req.method() == http::verb::get && req.target() == "/metrics") co_return Metrics(s);
    boost::system::error_code ec;
    const json::value body = json::parse(req.body(), ec);
    const json::object* o = !ec && body.is_object() ? &body.as_object() : nullptr;
    const std::string mode =
        o && o->contains("model") && o->at("model").is_string() ? std::string(o->at("model").as_string()) : "";
    const int64_t tokens =
        o && o->contains("max_tokens") && o->at("max_tokens").is_int64() ? o->at("max_tokens").as_int64() : 16;
    const auto header = req.find("x-goodput-request");
    const int64_t index = header == req.end() ? -1 : std::atoll(std::string(header->value()).c_str());
    Record(index, req, o);
    if (mode == "fail-500") {
      co_return Write(
          s,
          "HTTP/1.1 500 Internal Server Error\r\nContent-Type: application/json\r\nContent-Length: 33\r\n\r\n"
          "{\"error\":{\"message\":\"overload\"}}\n",
          false);
    }
    if (mode == "not-sse") {
      co_return Write(s, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}", false);
    }
    if (mode == "huge-chunk-line") {  // a chunk-size line whose extension never ends
      Write(s, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n10;x=", false);
      for (int i = 0; i < 64 && Write(s, std::string(1 << 16, 'x'), false); ++i) {
      }
      co_await Pause(3600);  // the client must give up on its own
      co_return false;
    }
    const bool chunked = options.keep_alive;
    const std::string head =
        chunked ? "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
                : "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n";
    if (!Write(s, head, false)) co_return false;
    if (mode == "stall") {
      co_await Pause(3600);
      co_return false;
    }
    if (mode == "malformed") {
      Write(s, "data: {\"choices\": [\n\n", chunked);
      co_return false;
    }
    if (mode == "huge-line") {
      Write(s, "data: " + std::string(2 << 20, 'x'), chunked);
      co_await Pause(3600);  // the client must give up on its own
      co_return false;
    }
    co_await Pause(options.ttft_s);
    if (!Write(s, "data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"}}]}\n\n",
               chunked)) {
      co_return false;
    }
    const int64_t per_chunk = mode == "two-per-chunk" ? 2 : std::max(1, options.tokens_per_chunk);
    for (int64_t sent = 0; sent < tokens;) {
      if (sent > 0) co_await Pause(options.itl_s);
      if (mode == "cut" && sent == 2) co_return false;
      const int64_t k = std::min(tokens - sent, per_chunk);
      sent += k;
      const double before = clock.Now();
      const bool ok = Write(s, TokenChunk(mode, sent, tokens, k), chunked);
      const double after = clock.Now();
      if (!ok) co_return false;
      std::lock_guard<std::mutex> lock(mu);
      writes[index].push_back({before, after});
    }
    std::string tail;
    if (mode != "no-usage" && options.usage != Options::Usage::kNone) {
      tail += fmt::format("data: {{\"choices\":[],\"usage\":{{\"prompt_tokens\":1,\"completion_tokens\":{}}}}}\n\n",
                          tokens + (mode == "usage-lies" ? 1 : 0));
    }
    if (mode != "no-done" && options.send_done) tail += "data: [DONE]\n\n";
    if (!tail.empty()) Write(s, tail, chunked);  // an empty chunk would end a chunked body
    {
      std::lock_guard<std::mutex> lock(mu);
      ++answered;
    }
    if (!chunked) co_return false;  // Connection: close ends the body
    co_return Write(s, "0\r\n\r\n", false);
  }
};

Result<std::unique_ptr<FakeSseServer>> FakeSseServer::Start(Options options, const Clock& clock) {
  auto impl = std::make_unique<Impl>(options, clock);
  boost::system::error_code ec;
  const tcp::endpoint ep(net::ip::make_address("127.0.0.1"), 0);
  impl->acceptor.open(ep.protocol(), ec);
  if (!ec) impl->acceptor.bind(ep, ec);
  if (!ec) impl->acceptor.listen(net::socket_base::max_listen_connections, ec);
  if (ec) return Status::IoError("fake SSE server: " + ec.message());
  net::co_spawn(impl->ioc, impl->Accept(), net::detached);
  Impl* raw = impl.get();
  impl->thread = std::thread([raw] { raw->ioc.run(); });
  return std::unique_ptr<FakeSseServer>(new FakeSseServer(std::move(impl)));
}

FakeSseServer::FakeSseServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

FakeSseServer::~FakeSseServer() {
  impl_->ioc.stop();
  impl_->thread.join();
}

uint16_t FakeSseServer::port() const { return impl_->acceptor.local_endpoint().port(); }

std::vector<FakeSseServer::TokenWrite> FakeSseServer::TokenWrites(int64_t index) const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  const auto it = impl_->writes.find(index);
  return it == impl_->writes.end() ? std::vector<TokenWrite>{} : it->second;
}

std::optional<FakeSseServer::Seen> FakeSseServer::SeenRequest(int64_t index) const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  const auto it = impl_->seen.find(index);
  return it == impl_->seen.end() ? std::nullopt : std::optional<Seen>(it->second);
}

int64_t FakeSseServer::connections() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->connections;
}

int64_t FakeSseServer::idle_closes() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->idle_closes;
}

}  // namespace goodput::testing
