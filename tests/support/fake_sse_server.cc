#include "support/fake_sse_server.h"

#include <chrono>
#include <cstdlib>
#include <thread>

#include <boost/asio.hpp>
#include <boost/asio/experimental/as_tuple.hpp>
#include <boost/beast.hpp>
#include <boost/json.hpp>
#include <fmt/format.h>

namespace goodput::testing {
namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace json = boost::json;
using tcp = net::ip::tcp;
using net::awaitable;
constexpr auto kNoThrow = net::experimental::as_tuple(net::use_awaitable);

struct FakeSseServer::Impl {
  Impl(Options o, const Clock& c) : options(o), clock(c), acceptor(ioc) {}
  Options options;
  const Clock& clock;
  net::io_context ioc{1};
  tcp::acceptor acceptor;
  std::thread thread;
  mutable std::mutex mu;
  std::map<int64_t, std::vector<TokenWrite>> writes;  // per request; under mu

  awaitable<void> Accept() {
    while (true) {
      auto [ec, socket] = co_await acceptor.async_accept(kNoThrow);
      if (ec) co_return;
      net::co_spawn(ioc, Session(beast::tcp_stream(std::move(socket))), net::detached);
    }
  }

  awaitable<bool> Write(beast::tcp_stream& s, const std::string& text) {
    auto [ec, n] = co_await net::async_write(s, net::buffer(text), kNoThrow);
    co_return !ec;
  }

  awaitable<void> Pause(double seconds) {
    net::steady_timer t(ioc, std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                 std::chrono::duration<double>(seconds)));
    co_await t.async_wait(kNoThrow);
  }

  awaitable<void> Session(beast::tcp_stream stream) {
    beast::flat_buffer buffer;
    while (true) {
      http::request<http::string_body> req;
      auto [ec, n] = co_await http::async_read(stream, buffer, req, kNoThrow);
      if (ec) co_return;
      if (!co_await Answer(stream, req)) co_return;
    }
  }

  // Streams the answer; false when the connection is finished.
  awaitable<bool> Answer(beast::tcp_stream& s, const http::request<http::string_body>& req) {
    boost::system::error_code ec;
    const json::value body = json::parse(req.body(), ec);
    const json::object* o = !ec && body.is_object() ? &body.as_object() : nullptr;
    const std::string mode = o && o->contains("model") && o->at("model").is_string() ? std::string(o->at("model").as_string()) : "";
    const int64_t tokens = o && o->contains("max_tokens") && o->at("max_tokens").is_int64() ? o->at("max_tokens").as_int64() : 16;
    const auto header = req.find("x-goodput-request");
    const int64_t index = header == req.end() ? -1 : std::atoll(std::string(header->value()).c_str());
    if (mode == "fail-500") {
      const std::string text = "HTTP/1.1 500 Internal Server Error\r\nContent-Type: application/json\r\nContent-Length: 33\r\n\r\n"
                               "{\"error\":{\"message\":\"overload\"}}\n";
      co_return co_await Write(s, text);
    }
    if (mode == "not-sse") {
      const std::string text = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}";
      co_return co_await Write(s, text);
    }
    const std::string head = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n";
    if (!co_await Write(s, head)) co_return false;
    if (mode == "stall") {
      co_await Pause(3600);
      co_return false;
    }
    if (mode == "malformed") {
      const std::string bad = "data: {\"choices\": [\n\n";
      co_await Write(s, bad);
      co_return false;
    }
    co_await Pause(options.ttft_s);
    const std::string role = "data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"}}]}\n\n";
    if (!co_await Write(s, role)) co_return false;
    for (int64_t i = 0; i < tokens; ++i) {
      if (i > 0) co_await Pause(options.itl_s);
      if (mode == "cut" && i == 2) co_return false;
      const std::string chunk = "data: {\"choices\":[{\"index\":0,\"text\":\"x\"}]}\n\n";
      // A plain (blocking) write, so that `after` follows the send call at
      // once: an awaited write would resume later and widen the interval.
      const double before = clock.Now();
      boost::system::error_code wec;
      net::write(s.socket(), net::buffer(chunk), wec);
      const double after = clock.Now();
      if (wec) co_return false;
      std::lock_guard<std::mutex> lock(mu);
      writes[index].push_back({before, after});
    }
    std::string tail;
    if (mode != "no-usage") {
      tail += fmt::format("data: {{\"choices\":[],\"usage\":{{\"prompt_tokens\":1,\"completion_tokens\":{}}}}}\n\n",
                          tokens + (mode == "usage-lies" ? 1 : 0));
    }
    tail += "data: [DONE]\n\n";
    co_await Write(s, tail);
    co_return false;  // Connection: close
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

}  // namespace goodput::testing
