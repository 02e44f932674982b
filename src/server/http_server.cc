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
    if (options.send_buffer_bytes > 0) {
      boost::system::error_code ignored;
      socket.set_option(net::socket_base::send_buffer_size(static_cast<int>(options.send_buffer_bytes)), ignored);
    }
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
    {

      Response res = Error(req, ApiError{405, fmt::format("{} does not allow {}", target, std::string(req.method_string())),
                                                "invalid_request_error", "", ""});

      co_return co_await send(std::move(res));

    }
  }
  {

    Response res = Error(req, ApiError{404, fmt::format("no route {}", target), "invalid_request_error", "", ""});

    co_return co_await send(std::move(res));

  }
}

namespace {

std::string ChunkJson(const std::string& id, bool chat, double created, const std::string& model, const std::string& text,
                      const char* finish, bool first) {
  json::object choice{{"index", 0}, {"finish_reason", finish ? json::value(finish) : json::value(nullptr)}};
  if (chat) {
    json::object delta;
    if (first) delta["role"] = "assistant";
    if (!text.empty() || !finish) delta["content"] = text;
    choice["delta"] = delta;
  } else {
    choice["text"] = text;
    choice["logprobs"] = nullptr;
  }
  return json::serialize(json::object{{"id", id},
                                      {"object", chat ? "chat.completion.chunk" : "text_completion"},
                                      {"created", static_cast<int64_t>(created)},
                                      {"model", model},
                                      {"choices", json::array{choice}}});
}

json::object Usage(int64_t prompt, int64_t completion) {
  return json::object{{"prompt_tokens", prompt}, {"completion_tokens", completion}, {"total_tokens", prompt + completion}};
}

std::string SseEvent(const std::string& data) { return "data: " + data + "\n\n"; }

std::string UsageChunkJson(const std::string& id, bool chat, double created, const std::string& model,
                           const json::object& usage) {
  return json::serialize(json::object{{"id", id},
                                      {"object", chat ? "chat.completion.chunk" : "text_completion"},
                                      {"created", static_cast<int64_t>(created)},
                                      {"model", model},
                                      {"choices", json::array{}},
                                      {"usage", usage}});
}

std::string ResponseJson(const std::string& id, bool chat, double created, const std::string& model,
                         const std::string& text, const char* finish, const json::object& usage) {
  json::object choice{{"index", 0}, {"finish_reason", finish}};
  if (chat) {
    choice["message"] = json::object{{"role", "assistant"}, {"content", text}};
  } else {
    choice["text"] = text;
    choice["logprobs"] = nullptr;
  }
  return json::serialize(json::object{{"id", id}, {"object", chat ? "chat.completion" : "text_completion"},
                                      {"created", static_cast<int64_t>(created)}, {"model", model},
                                      {"choices", json::array{choice}}, {"usage", usage}});
}

const char* FinishName(FinishReason r, bool stopped) {
  if (stopped || r == FinishReason::kStop) return "stop";
  return r == FinishReason::kAborted ? "abort" : "length";
}

}  // namespace

awaitable<bool> Server::Impl::Generate(beast::tcp_stream& stream, Request& req, bool chat) {
  auto send = [&](Response res) -> awaitable<bool> {
    stream.expires_after(std::chrono::seconds(options.write_timeout_s));
    auto [ec, n] = co_await http::async_write(stream, res, kNoThrow);
    co_return !ec && res.keep_alive();
  };
  auto parsed = ParseGenerationRequest(req.body(), chat, std::string(req["x-goodput-class"]));
  if (auto* e = std::get_if<ApiError>(&parsed)) {
    Response res = Error(req, *e);
    co_return co_await send(std::move(res));
  }
  GenerationRequest& g = std::get<GenerationRequest>(parsed);
  if (g.model != model.name) {
    ApiError e{404, fmt::format("The model `{}` does not exist.", g.model), "NotFoundError", "model", "model_not_found"};
    Response res = Error(req, e);
    co_return co_await send(std::move(res));
  }
  auto prompt = PromptIds(g, model);
  if (auto* e = std::get_if<ApiError>(&prompt)) {
    Response res = Error(req, *e);
    co_return co_await send(std::move(res));
  }
  goodput::Request r;
  r.id = next_id++;
  r.token_ids = std::get<std::vector<int32_t>>(std::move(prompt));
  r.num_prompt_tokens = static_cast<int64_t>(r.token_ids.size());
  r.sampling = g.sampling;
  r.sampling.max_tokens = std::min(r.sampling.max_tokens, model.max_model_len - r.num_prompt_tokens);
  r.sampling.seed = g.seed ? *g.seed : seeds();
  r.priority = g.priority;
  r.offline = std::find(model.offline_classes.begin(), model.offline_classes.end(), g.request_class) !=
              model.offline_classes.end();
  r.arrival_time = engine.Now();
  const RequestId id = r.id;
  const int64_t prompt_tokens = r.num_prompt_tokens;
  auto channel = std::make_shared<Channel>(stream.get_executor(), static_cast<size_t>(r.sampling.max_tokens + 8));
  if (!engine.Submit(std::move(r), [channel](const RequestOutput& o) { channel->try_send(boost::system::error_code{}, o); })) {
    {

      Response res = Error(req, ApiError{503, "the server is shutting down", "server_error", "", ""});

      co_return co_await send(std::move(res));

    }
  }
  const std::string rid = fmt::format("{}-{}", chat ? "chatcmpl" : "cmpl", id);
  const double created = UnixSeconds(), t0 = engine.Now();
  TextStream text(*model.tokenizer, g.stop);
  std::string all_text;
  int64_t n_out = 0;
  double t_first = -1, t_last = -1;
  FinishReason reason = FinishReason::kNone;
  bool client_gone = false, header_sent = false, first_chunk = true;
  http::response<http::empty_body> head{http::status::ok, req.version()};
  http::response_serializer<http::empty_body> serializer{head};
  auto write = [&](const std::string& data) -> awaitable<void> {
    if (client_gone) co_return;
    stream.expires_after(std::chrono::seconds(options.write_timeout_s));
    boost::system::error_code ec;
    if (!header_sent) {
      head.set(http::field::server, "goodput");
      head.set(http::field::content_type, "text/event-stream");
      head.set(http::field::cache_control, "no-cache");
      head.chunked(true);
      std::tie(ec, std::ignore) = co_await http::async_write_header(stream, serializer, kNoThrow);
      header_sent = true;
    }
    if (!ec) std::tie(ec, std::ignore) = co_await net::async_write(stream, http::make_chunk(net::buffer(data)), kNoThrow);
    if (ec) {  // the client left: free its KV blocks now
      client_gone = true;
      engine.Abort(id);
    }
  };
  while (true) {
    auto [ec, o] = co_await channel->async_receive(kNoThrow);
    if (ec) break;
    if (o.num_new_tokens > 0) {
      n_out += o.num_new_tokens;
      if (t_first < 0) t_first = o.time;
      t_last = o.time;
    }
    std::string delta = text.Append(o.new_token_ids);
    if (text.stopped() && !o.finished) engine.Abort(id);
    if (o.finished) {
      reason = o.reason;
      delta += text.Finish();
    }
    all_text += delta;
    // (Events are built into named strings first: GCC 12 mishandles string
    // literals inside co_await expressions.)
    if (g.stream && reason != FinishReason::kRejected) {
      if (!delta.empty()) {
        const std::string event = SseEvent(ChunkJson(rid, chat, created, model.name, delta, nullptr, first_chunk));
        co_await write(event);
        first_chunk = false;
      }
      if (o.finished) {
        const std::string event =
            SseEvent(ChunkJson(rid, chat, created, model.name, "", FinishName(reason, text.stopped()), first_chunk));
        co_await write(event);
      }
    }
    if (o.finished) break;
  }
  if (t_first >= 0) metrics.ObserveRequest(t_first - t0, n_out >= 2 ? (t_last - t_first) / (n_out - 1) : -1, t_last - t0);
  if (reason == FinishReason::kRejected) {
    {

      Response res = Error(req, ApiError{400, "the request needs more KV cache than this server has", "invalid_request_error", "", ""});

      co_return co_await send(std::move(res));

    }
  }
  const json::object usage = Usage(prompt_tokens, n_out);
  if (g.stream) {
    if (g.include_usage) {
      const std::string event = SseEvent(UsageChunkJson(rid, chat, created, model.name, usage));
      co_await write(event);
    }
    const std::string done = SseEvent("[DONE]");
    co_await write(done);
    if (client_gone) co_return false;
    stream.expires_after(std::chrono::seconds(options.write_timeout_s));
    auto [ec, n] = co_await net::async_write(stream, http::make_chunk_last(), kNoThrow);
    co_return !ec && req.keep_alive();
  }
  Response res = Simple(req, http::status::ok,
                        ResponseJson(rid, chat, created, model.name, all_text, FinishName(reason, text.stopped()), usage),
                        "application/json");
  co_return co_await send(std::move(res));
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
