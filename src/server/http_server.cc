#include "server/http_server.h"

#include <sys/socket.h>

#include <chrono>
#include <random>

#include <boost/asio.hpp>
#include <boost/asio/experimental/concurrent_channel.hpp>
#include <boost/beast.hpp>
#include <boost/json.hpp>
#include <fmt/format.h>

#include "core/asio_names.h"
#include "core/clock.h"
#include "server/routes.h"
#include "server/session.h"

namespace goodput::server {
using namespace goodput::asio_names;  // net, beast, http, tcp, awaitable, kNoThrow
namespace json = boost::json;
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
  awaitable<bool> Send(beast::tcp_stream& stream, Response res);
  awaitable<bool> Generate(beast::tcp_stream& stream, Request& req, bool chat);
  awaitable<void> WatchDisconnect(beast::tcp_stream& stream, RequestId id, std::shared_ptr<bool> answered);
};

awaitable<void> Server::Impl::Accept() {
  auto self = shared_from_this();
  while (acceptor.is_open()) {
    auto [ec, socket] = co_await acceptor.async_accept(kNoThrow);
    if (ec) {
      if (!acceptor.is_open()) co_return;
      // Out of descriptors (EMFILE/ENFILE) the pending connection stays
      // queued and accept fails again at once: wait for connections to close
      // instead of spinning a core.
      net::steady_timer backoff(ioc, std::chrono::milliseconds(100));
      co_await backoff.async_wait(kNoThrow);
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
  const Routes routes{&model, options.api_key, [this] { return metrics.Render(engine.Stats()); }};
  while (true) {
    stream.expires_after(std::chrono::seconds(options.idle_timeout_s));
    http::request_parser<http::string_body> parser;
    parser.body_limit(static_cast<uint64_t>(options.body_limit));
    parser.header_limit(static_cast<uint32_t>(options.header_limit));
    auto [ec, n] = co_await http::async_read(stream, buffer, parser, kNoThrow);
    if (ec) {  // answered when it says something to the client, then closed
      if (auto res = ReadErrorResponse(ec, options.body_limit)) co_await Send(stream, std::move(*res));
      break;
    }
    Request req = parser.release();
    Generation generation = Generation::kNone;
    auto res = Answer(routes, req, &generation);
    const bool keep = res ? co_await Send(stream, std::move(*res))
                          : co_await Generate(stream, req, generation == Generation::kChatCompletions);
    if (!keep || !req.keep_alive()) break;
  }
  boost::system::error_code ignored;
  stream.socket().shutdown(tcp::socket::shutdown_send, ignored);
}

awaitable<bool> Server::Impl::Send(beast::tcp_stream& stream, Response res) {
  stream.expires_after(std::chrono::seconds(options.write_timeout_s));
  auto [ec, n] = co_await http::async_write(stream, res, kNoThrow);
  co_return !ec && res.keep_alive();
}

namespace {

// A streamed response's body: HTTP/1.1 chunks, or for an HTTP/1.0 client
// (which knows no chunked encoding) the raw bytes with the end marked by
// closing the connection. The header goes out with the first write. A write
// that fails (the client left, or stopped reading for the write timeout)
// marks the client gone, and later writes do nothing.
class SseWriter {
 public:
  SseWriter(beast::tcp_stream& stream, unsigned version, int timeout_s)
      : stream_(stream), head_(http::status::ok, version), serializer_(head_), timeout_s_(timeout_s),
        chunked_(version >= 11) {}

  awaitable<void> Write(const std::string& data) {
    if (gone_) co_return;
    stream_.expires_after(std::chrono::seconds(timeout_s_));
    boost::system::error_code ec;
    if (!header_sent_) {
      head_.set(http::field::server, "goodput");
      head_.set(http::field::content_type, "text/event-stream");
      head_.set(http::field::cache_control, "no-cache");
      head_.chunked(chunked_);
      head_.keep_alive(chunked_);
      std::tie(ec, std::ignore) = co_await http::async_write_header(stream_, serializer_, kNoThrow);
      header_sent_ = true;
    }
    if (!ec && chunked_) {
      std::tie(ec, std::ignore) = co_await net::async_write(stream_, http::make_chunk(net::buffer(data)), kNoThrow);
    } else if (!ec) {
      std::tie(ec, std::ignore) = co_await net::async_write(stream_, net::buffer(data), kNoThrow);
    }
    gone_ = static_cast<bool>(ec);
  }

  // Ends the body; true when the connection can carry another request.
  awaitable<bool> End() {
    if (gone_ || !chunked_) co_return false;
    stream_.expires_after(std::chrono::seconds(timeout_s_));
    auto [ec, n] = co_await net::async_write(stream_, http::make_chunk_last(), kNoThrow);
    gone_ = static_cast<bool>(ec);
    co_return !gone_;
  }

  bool gone() const { return gone_; }

 private:
  beast::tcp_stream& stream_;
  http::response<http::empty_body> head_;
  http::response_serializer<http::empty_body> serializer_;
  int timeout_s_;
  bool chunked_;
  bool header_sent_ = false, gone_ = false;
};

}  // namespace

// While a request is generated the connection is otherwise silent (always
// for a non-streaming request): a client that closes it is noticed here, by
// its end-of-stream, and its request aborted. More bytes (a pipelined
// request) are left for the next read.
awaitable<void> Server::Impl::WatchDisconnect(beast::tcp_stream& stream, RequestId id, std::shared_ptr<bool> answered) {
  auto self = shared_from_this();
  auto [ec] = co_await stream.socket().async_wait(tcp::socket::wait_read, kNoThrow);
  if (*answered || ec) co_return;  // the answer went out first (the wait was cancelled)
  char byte;
  if (recv(stream.socket().native_handle(), &byte, 1, MSG_PEEK | MSG_DONTWAIT) <= 0) engine.Abort(id);
}

awaitable<bool> Server::Impl::Generate(beast::tcp_stream& stream, Request& req, bool chat) {
  const GenerationSession::Arrival arrival{req.body(), chat, std::string(req["x-goodput-class"]), next_id++, seeds(),
                                           engine.Now(), UnixSeconds()};
  auto opened = GenerationSession::Open(model, arrival);
  // (Responses are built in named variables before co_await: GCC 12
  // mishandles temporaries inside co_await expressions.)
  if (auto* e = std::get_if<ApiError>(&opened)) {
    Response res = ErrorResponse(req, *e);
    co_return co_await Send(stream, std::move(res));
  }
  GenerationSession& session = std::get<GenerationSession>(opened);
  const RequestId id = session.id();
  auto channel = std::make_shared<Channel>(stream.get_executor(), static_cast<size_t>(session.max_tokens() + 8));
  if (!engine.Submit(session.TakeEngineRequest(),
                     [channel](const RequestOutput& o) { channel->try_send(boost::system::error_code{}, o); })) {
    Response res = ErrorResponse(req, ApiError{503, "the server is shutting down", "server_error", "", ""});
    co_return co_await Send(stream, std::move(res));
  }
  auto answered = std::make_shared<bool>(false);
  net::co_spawn(stream.get_executor(), WatchDisconnect(stream, id, answered), net::detached);
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
  *answered = true;
  boost::system::error_code ignored;
  stream.socket().cancel(ignored);  // ends the disconnect watch
  if (auto l = session.latencies()) metrics.ObserveRequest(l->ttft, l->tpot, l->e2e);
  auto rest = session.Finish();
  if (auto* e = std::get_if<ApiError>(&rest)) {
    Response res = ErrorResponse(req, *e);
    co_return co_await Send(stream, std::move(res));
  }
  if (!session.stream()) {
    Response res = TextResponse(req, http::status::ok, std::get<std::string>(std::move(rest)), "application/json");
    co_return co_await Send(stream, std::move(res));
  }
  co_await out.Write(std::get<std::string>(rest));
  const bool reusable = co_await out.End();
  co_return reusable && req.keep_alive();
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
    return Status::IoError(
        fmt::format("cannot listen on {}:{}: {}", impl_->options.host, impl_->options.port, ec.message()));
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
