#include "server/http_server.h"

#include <chrono>
#include <random>

#include <boost/asio.hpp>
#include <boost/asio/experimental/as_tuple.hpp>
#include <boost/asio/experimental/concurrent_channel.hpp>
#include <boost/beast.hpp>
#include <boost/json.hpp>
#include <fmt/format.h>

#include "core/clock.h"
#include "server/session.h"

namespace goodput::server {
namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace json = boost::json;
using tcp = net::ip::tcp;
using net::awaitable;
constexpr auto kNoThrow = net::experimental::as_tuple(net::use_awaitable);
using Channel = net::experimental::concurrent_channel<void(boost::system::error_code, RequestOutput)>;
using Request = http::request<http::string_body>;
using Response = http::response<http::string_body>;

struct Server::Impl : std::enable_shared_from_this<Server::Impl> {
  Impl(net::io_context& i, EngineService& e, ServedModel m, ServerOptions o)
      : ioc(i), engine(e), model(std::move(m)), options(std::move(o)), acceptor(i), metrics(model.name) {}

  net::io_context& ioc;
  EngineService& engine;
  ServedModel model;
  ServerOptions options;
  tcp::acceptor acceptor;
  Metrics metrics;
  std::atomic<RequestId> next_id{1};
  std::mt19937_64 seeds{std::random_device{}()};

  awaitable<void> Accept();
  awaitable<void> Session(tcp::socket socket);
  awaitable<bool> Handle(beast::tcp_stream& stream, Request& req);
  awaitable<bool> Generate(beast::tcp_stream& stream, Request& req, bool chat);
  Response Simple(const Request& req, http::status status, std::string body, const char* type);
  Response Error(const Request& req, const ApiError& e);
};

Response Server::Impl::Simple(const Request& req, http::status status, std::string body, const char* type) {
  Response res{status, req.version()};
  res.set(http::field::server, "goodput");
  res.set(http::field::content_type, type);
  res.keep_alive(req.keep_alive());
  res.body() = std::move(body);
  res.prepare_payload();
  return res;
}

Response Server::Impl::Error(const Request& req, const ApiError& e) {
  return Simple(req, static_cast<http::status>(e.http_status), e.ToJson(), "application/json");
}

awaitable<void> Server::Impl::Accept() {
  auto self = shared_from_this();
  while (acceptor.is_open()) {
    auto [ec, socket] = co_await acceptor.async_accept(kNoThrow);
    if (ec) {
      if (!acceptor.is_open()) co_return;
      continue;
    }
    boost::system::error_code ignored;
    if (options.send_buffer_bytes > 0) {
      socket.set_option(net::socket_base::send_buffer_size(static_cast<int>(options.send_buffer_bytes)), ignored);
    }
    // Every SSE chunk goes out when written: with Nagle's algorithm a chunk
    // waits for the ACK of the previous write, which the client delays by up
    // to 40 ms, and that wait lands in TTFT (measured: 43.9 ms TTFT p50 for
    // goodput-tiny, whose prefill takes about 1 ms).
    socket.set_option(tcp::no_delay(true), ignored);
    net::co_spawn(acceptor.get_executor(), Session(std::move(socket)), net::detached);
  }
}

awaitable<void> Server::Impl::Session(tcp::socket socket) {
  auto self = shared_from_this();
  beast::tcp_stream stream(std::move(socket));
  beast::flat_buffer buffer;
  while (true) {
    stream.expires_after(std::chrono::seconds(options.idle_timeout_s));
    http::request_parser<http::string_body> parser;
    parser.body_limit(static_cast<uint64_t>(options.body_limit));
    auto [ec, n] = co_await http::async_read(stream, buffer, parser, kNoThrow);
    if (ec == http::error::body_limit) {
      Request req;
      req.version(11);
      ApiError e{413, fmt::format("the request body exceeds {} bytes", options.body_limit), "invalid_request_error", "", ""};
      Response res = Error(req, e);
      res.keep_alive(false);
      co_await http::async_write(stream, res, kNoThrow);
      break;
    }
    if (ec) break;  // closed, timed out or malformed: nothing to answer
    Request req = parser.release();
    const bool keep = co_await Handle(stream, req);
    if (!keep || !req.keep_alive()) break;
  }
  boost::system::error_code ignored;
  stream.socket().shutdown(tcp::socket::shutdown_send, ignored);
}

awaitable<bool> Server::Impl::Handle(beast::tcp_stream& stream, Request& req) {
  const std::string target(req.target().substr(0, req.target().find('?')));
  auto send = [&](Response res) -> awaitable<bool> {
    stream.expires_after(std::chrono::seconds(options.write_timeout_s));
    auto [ec, n] = co_await http::async_write(stream, res, kNoThrow);
    co_return !ec && res.keep_alive();
  };
  // Responses are built in named variables before co_await: GCC 12 mishandles
  // temporaries (string literals, braced aggregates) inside co_await expressions.
  if (target == "/health") {
    Response res = Simple(req, http::status::ok, "", "text/plain");
    co_return co_await send(std::move(res));
  }
  if (target == "/metrics") {
    Response res = Simple(req, http::status::ok, metrics.Render(engine.Stats()), "text/plain; version=0.0.4");
    co_return co_await send(std::move(res));
  }
  if (!options.api_key.empty() && req[http::field::authorization] != "Bearer " + options.api_key) {
    ApiError e{401, "Incorrect or missing API key: send 'Authorization: Bearer <key>'", "invalid_request_error", "",
               "invalid_api_key"};
    Response res = Error(req, e);
    co_return co_await send(std::move(res));
  }
  if (target == "/v1/models" && req.method() == http::verb::get) {
    json::object m{{"id", model.name}, {"object", "model"}, {"created", 0}, {"owned_by", "goodput"},
                   {"max_model_len", model.max_model_len}};
    const json::object body{{"object", "list"}, {"data", json::array{m}}};
    Response res = Simple(req, http::status::ok, json::serialize(body), "application/json");
    co_return co_await send(std::move(res));
  }
  const bool completions = target == "/v1/completions", chat = target == "/v1/chat/completions";
  if ((completions || chat) && req.method() == http::verb::post) co_return co_await Generate(stream, req, chat);
  if (completions || chat || target == "/v1/models") {
    Response res = Error(req, ApiError{405, fmt::format("{} does not allow {}", target, std::string(req.method_string())),
                                       "invalid_request_error", "", ""});
    co_return co_await send(std::move(res));
  }
  Response res = Error(req, ApiError{404, fmt::format("no route {}", target), "invalid_request_error", "", ""});
  co_return co_await send(std::move(res));
}

namespace {

// A streamed response's body as HTTP/1.1 chunks; the header goes out with the
// first write. A write that fails (the client left, or stopped reading for
// the write timeout) marks the client gone, and later writes do nothing.
class SseWriter {
 public:
  SseWriter(beast::tcp_stream& stream, unsigned version, int timeout_s)
      : stream_(stream), head_(http::status::ok, version), serializer_(head_), timeout_s_(timeout_s) {}

  awaitable<void> Write(const std::string& data) {
    if (gone_) co_return;
    stream_.expires_after(std::chrono::seconds(timeout_s_));
    boost::system::error_code ec;
    if (!header_sent_) {
      head_.set(http::field::server, "goodput");
      head_.set(http::field::content_type, "text/event-stream");
      head_.set(http::field::cache_control, "no-cache");
      head_.chunked(true);
      std::tie(ec, std::ignore) = co_await http::async_write_header(stream_, serializer_, kNoThrow);
      header_sent_ = true;
    }
    if (!ec) std::tie(ec, std::ignore) = co_await net::async_write(stream_, http::make_chunk(net::buffer(data)), kNoThrow);
    gone_ = static_cast<bool>(ec);
  }

  awaitable<void> End() {
    if (gone_) co_return;
    stream_.expires_after(std::chrono::seconds(timeout_s_));
    auto [ec, n] = co_await net::async_write(stream_, http::make_chunk_last(), kNoThrow);
    gone_ = static_cast<bool>(ec);
  }

  bool gone() const { return gone_; }

 private:
  beast::tcp_stream& stream_;
  http::response<http::empty_body> head_;
  http::response_serializer<http::empty_body> serializer_;
  int timeout_s_;
  bool header_sent_ = false, gone_ = false;
};

}  // namespace

awaitable<bool> Server::Impl::Generate(beast::tcp_stream& stream, Request& req, bool chat) {
  auto send = [&](Response res) -> awaitable<bool> {
    stream.expires_after(std::chrono::seconds(options.write_timeout_s));
    auto [ec, n] = co_await http::async_write(stream, res, kNoThrow);
    co_return !ec && res.keep_alive();
  };
  const GenerationSession::Arrival arrival{req.body(), chat, std::string(req["x-goodput-class"]), next_id++, seeds(),
                                           engine.Now(), UnixSeconds()};
  auto opened = GenerationSession::Open(model, arrival);
  if (auto* e = std::get_if<ApiError>(&opened)) {
    Response res = Error(req, *e);
    co_return co_await send(std::move(res));
  }
  GenerationSession& session = std::get<GenerationSession>(opened);
  const RequestId id = session.id();
  auto channel = std::make_shared<Channel>(stream.get_executor(), static_cast<size_t>(session.max_tokens() + 8));
  if (!engine.Submit(session.TakeEngineRequest(),
                     [channel](const RequestOutput& o) { channel->try_send(boost::system::error_code{}, o); })) {
    Response res = Error(req, ApiError{503, "the server is shutting down", "server_error", "", ""});
    co_return co_await send(std::move(res));
  }
  SseWriter out(stream, req.version(), options.write_timeout_s);
  while (true) {
    auto [ec, o] = co_await channel->async_receive(kNoThrow);
    if (ec) break;
    const GenerationSession::Update u = session.OnOutput(o);
    if (u.abort) engine.Abort(id);
    if (!u.events.empty() && !out.gone()) {
      co_await out.Write(u.events);
      if (out.gone()) engine.Abort(id);  // the client left: free its KV blocks now
    }
    if (u.finished) break;
  }
  if (auto l = session.latencies()) metrics.ObserveRequest(l->ttft, l->tpot, l->e2e);
  auto rest = session.Finish();
  if (auto* e = std::get_if<ApiError>(&rest)) {
    Response res = Error(req, *e);
    co_return co_await send(std::move(res));
  }
  if (!session.stream()) {
    Response res = Simple(req, http::status::ok, std::get<std::string>(std::move(rest)), "application/json");
    co_return co_await send(std::move(res));
  }
  co_await out.Write(std::get<std::string>(rest));
  co_await out.End();
  co_return !out.gone() && req.keep_alive();
}

Server::Server(net::io_context& ioc, EngineService& engine, ServedModel model, ServerOptions options)
    : impl_(std::make_shared<Impl>(ioc, engine, std::move(model), std::move(options))) {}

Server::~Server() { StopAccepting(); }

Status Server::Listen() {
  boost::system::error_code ec;
  const auto address = net::ip::make_address(impl_->options.host, ec);
  if (ec) return Status::InvalidArgument(fmt::format("--host '{}' is not an IP address", impl_->options.host));
  const tcp::endpoint endpoint(address, impl_->options.port);
  impl_->acceptor.open(endpoint.protocol(), ec);
  if (!ec) impl_->acceptor.set_option(net::socket_base::reuse_address(true), ec);
  if (!ec) impl_->acceptor.bind(endpoint, ec);
  if (!ec) impl_->acceptor.listen(net::socket_base::max_listen_connections, ec);
  if (ec) {
    return Status::IoError(fmt::format("cannot listen on {}:{}: {}", impl_->options.host, impl_->options.port, ec.message()));
  }
  net::co_spawn(impl_->ioc, impl_->Accept(), net::detached);
  return Status::Ok();
}

uint16_t Server::port() const {
  boost::system::error_code ec;
  return impl_->acceptor.local_endpoint(ec).port();
}

void Server::StopAccepting() {
  boost::system::error_code ec;
  impl_->acceptor.close(ec);
}

}  // namespace goodput::server
