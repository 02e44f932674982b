#include "client/load_client.h"

#include <sys/prctl.h>
#include <sys/socket.h>

#include <chrono>
#include <cstring>
#include <deque>
#include <memory>
#include <optional>

#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast.hpp>
#include <fmt/format.h>

#include "client/openai_stream.h"
#include "client/sse.h"
#include "client/timestamped_read.h"
#include "core/asio_names.h"
#include "workload/arrivals.h"

namespace goodput::client {
using namespace goodput::asio_names;  // net, beast, http, tcp, awaitable, kNoThrow

namespace {

std::chrono::steady_clock::duration Seconds(double s) {
  return std::chrono::duration_cast<std::chrono::steady_clock::duration>(
      std::chrono::duration<double>(std::max(0.0, s)));
}

// The reason a reused keep-alive connection gives when the server closed it
// before answering: the request was never read, so it is sent once more.
constexpr const char* kClosedBeforeAnswer = "closed by the server before answering";

// One keep-alive connection, plain or TLS (held by pointer: the TLS stream
// refers to the TCP stream beside it).
struct Connection {
  explicit Connection(net::io_context& ioc) : tcp(ioc) {}
  beast::tcp_stream tcp;
  std::optional<net::ssl::stream<beast::tcp_stream&>> tls;
};
using Conn = std::unique_ptr<Connection>;

// Whether an idle keep-alive connection can carry another request: the
// server has not closed it (a peek sees end-of-stream) or sent anything
// unasked (a stray byte would be read as the next response).
bool StillOpen(Connection& c) {
  char byte;
  const ssize_t n = recv(c.tcp.socket().native_handle(), &byte, 1, MSG_PEEK | MSG_DONTWAIT);
  return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
}

class Run {
 public:
  Run(const LoadOptions& o, const Workload& w, const ArrivalSpec& load, const Clock& clock)
      : o_(o), w_(w), clock_(clock), workload_(ForRepetition(w, o.seed)), gen_(workload_, load) {
    if (o.endpoint.tls) {
      ssl_.emplace(net::ssl::context::tls_client);
      ssl_->set_default_verify_paths();
      ssl_->set_verify_mode(o.insecure_tls ? net::ssl::verify_none : net::ssl::verify_peer);
    }
  }

  std::vector<RequestRecord> Go() {
    // Timers fire up to 50 us late by default (the kernel's timer slack);
    // open-loop sends should not.
    prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
    t0_ = clock_.Now();
    if (o_.start_time) *o_.start_time = t0_;
    for (int c = 0; c < gen_.closed_clients(); ++c) net::co_spawn(ioc_, ClosedClient(c), net::detached);
    net::co_spawn(ioc_, OpenArrivals(), net::detached);
    if (o_.stop) net::co_spawn(ioc_, WatchStop(), net::detached);
    ioc_.run();
    // Stopped early: the slots of requests never sent stay empty and are dropped.
    std::vector<RequestRecord> out;
    for (size_t i = 0; i < records_.size(); ++i) {
      if (stored_[i]) out.push_back(std::move(records_[i]));
    }
    return out;
  }

 private:
  double Now() const { return clock_.Now() - t0_; }
  bool Stopped() const { return o_.stop && o_.stop(); }

  // Checks the stop request every 20 ms; once it is set, every request in
  // flight is abandoned at once (the io_context stops, their connections
  // close when the run goes and the server aborts them) rather than waited for.
  awaitable<void> WatchStop() {
    while (!done_) {
      if (Stopped()) {
        ioc_.stop();
        co_return;
      }
      stop_timer_.expires_after(std::chrono::milliseconds(20));
      co_await stop_timer_.async_wait(kNoThrow);
    }
  }

  awaitable<void> ClosedClient(int client) {
    Conn conn;
    while (!Stopped()) {
      auto item = gen_.NextForClient(client, Now());
      if (!item) break;
      co_await Send(*item, conn);
    }
  }

  awaitable<void> OpenArrivals() {
    net::steady_timer timer(ioc_);
    while (auto t = gen_.NextOpenArrival()) {
      const WorkItem item = gen_.PopOpen();
      timer.expires_after(Seconds(*t - Now()));  // the absolute schedule, re-read every time
      co_await timer.async_wait(kNoThrow);
      if (Stopped()) break;
      net::co_spawn(ioc_, SendPooled(item), net::detached);
    }
  }

  awaitable<void> SendPooled(WorkItem item) {
    Conn conn;
    if (!idle_.empty()) {
      conn = std::move(idle_.back());
      idle_.pop_back();
    }
    co_await Send(item, conn);
    if (conn) idle_.push_back(std::move(conn));
  }

  // Sends one request on `conn` (connecting when empty) and records it; the
  // connection is left empty when it cannot be reused.
  awaitable<void> Send(const WorkItem& item, Conn& conn) {
    RequestRecord rec;
    rec.request_class = w_.classes[item.class_index].name;
    rec.first_wave = item.first_wave;
    rec.t_arrival = item.t_arrival;
    rec.n_in = item.prompt_tokens;
    const double deadline = clock_.Now() + o_.timeout_s;
    std::string error = co_await Exchange(item, conn, rec, deadline);
    if (!error.empty()) {
      rec.ok = false;
      rec.error = std::move(error);
      conn.reset();
    }
    Store(item.index, std::move(rec));
  }

  void Store(int64_t index, RequestRecord rec) {
    if (static_cast<int64_t>(records_.size()) <= index) {
      records_.resize(index + 1);
      stored_.resize(index + 1, false);
    }
    records_[index] = std::move(rec);
    stored_[index] = true;
    ++finished_;
    if (o_.progress) o_.progress(finished_, gen_.budget());
    if (finished_ >= gen_.budget()) {  // the run is over: the stop watcher may go
      done_ = true;
      stop_timer_.cancel();
    }
  }

  http::request<http::string_body> MakeRequest(const WorkItem& item) const {
    GenerationBody b;
    b.model = o_.model;
    b.chat = o_.chat;
    b.prompt_ids = PromptTokenIds(item, workload_.seed, o_.prompt_salt);
    b.max_tokens = std::max<int64_t>(1, item.output_tokens);
    b.fixed_length = o_.fixed_length;
    b.priority = w_.classes[item.class_index].priority;
    http::request<http::string_body> req{http::verb::post,
                                         o_.endpoint.api_prefix + (o_.chat ? "/chat/completions" : "/completions"), 11};
    req.set(http::field::host, o_.endpoint.host);
    req.set(http::field::content_type, "application/json");
    req.set(http::field::accept, "text/event-stream");
    req.set("x-goodput-request", std::to_string(item.index));  // for server-side logs (and our fake server)
    req.set("x-goodput-class", w_.classes[item.class_index].name);
    if (!o_.endpoint.api_key.empty()) req.set(http::field::authorization, "Bearer " + o_.endpoint.api_key);
    req.keep_alive(true);
    req.body() = MakeRequestBody(b);
    req.prepare_payload();
    return req;
  }

  awaitable<std::string> Connect(Conn& conn, double deadline) {
    conn = std::make_unique<Connection>(ioc_);
    const std::string host = o_.endpoint.host, port = std::to_string(o_.endpoint.port);
    if (resolved_.empty()) {  // once per run: the resolver's thread hop costs a send hundreds of microseconds
      tcp::resolver resolver(ioc_);
      auto [rec, results] = co_await resolver.async_resolve(host, port, kNoThrow);
      if (rec) co_return "resolve " + host + ": " + rec.message();
      resolved_ = results;
    }
    conn->tcp.expires_after(Seconds(deadline - clock_.Now()));
    auto [ec, ep] = co_await conn->tcp.async_connect(resolved_, kNoThrow);
    if (ec) co_return "connect " + o_.endpoint.host + ":" + port + ": " + ec.message();
    EnableReceiveTimestamps(conn->tcp.socket().native_handle());  // without them, token times are the client's own
    boost::system::error_code ignored;
    conn->tcp.socket().set_option(tcp::no_delay(true), ignored);  // a request is never held back for an ACK
    if (!ssl_) co_return std::string();
    conn->tls.emplace(conn->tcp, *ssl_);
    SSL_set_tlsext_host_name(conn->tls->native_handle(), host.c_str());  // SNI
    conn->tls->set_verify_callback(net::ssl::host_name_verification(host));
    auto [hec] = co_await conn->tls->async_handshake(net::ssl::stream_base::client, kNoThrow);
    if (hec) co_return "TLS handshake with " + host + ": " + hec.message();
    co_return std::string();
  }

  // (Plain if/else: GCC 12 miscompiles co_await inside a conditional expression.)
  awaitable<boost::system::error_code> Write(Connection& c, http::request<http::string_body>& req) {
    if (c.tls) {
      auto [ec, n] = co_await http::async_write(*c.tls, req, kNoThrow);
      co_return ec;
    }
    auto [ec, n] = co_await http::async_write(c.tcp, req, kNoThrow);
    co_return ec;
  }

  // The HTTP exchange; returns "" on success, else the reason it failed. A
  // pooled connection the server has closed is replaced before sending; one
  // the server closes before answering (the race with its idle timeout) is
  // replaced and the request sent once more.
  awaitable<std::string> Exchange(const WorkItem& item, Conn& conn, RequestRecord& rec, double deadline) {
    auto req = MakeRequest(item);
    if (conn && !StillOpen(*conn)) conn.reset();
    const bool reused = conn != nullptr;
    std::string error = co_await Attempt(req, item, conn, rec, deadline);
    if (reused && (error == kClosedBeforeAnswer || error.rfind("send: ", 0) == 0)) {
      conn.reset();
      error = co_await Attempt(req, item, conn, rec, deadline);
    }
    co_return error;
  }

  awaitable<std::string> Attempt(http::request<http::string_body>& req, const WorkItem& item, Conn& conn,
                                 RequestRecord& rec, double deadline) {
    if (!conn) {
      std::string err = co_await Connect(conn, deadline);
      if (!err.empty()) co_return err;
    }
    rec.t_sent = Now();
    conn->tcp.expires_after(Seconds(deadline - clock_.Now()));
    const boost::system::error_code wec = co_await Write(*conn, req);
    if (wec) co_return "send: " + wec.message();
    bool reusable = false;
    std::string error;
    const Expected expected{std::max<int64_t>(1, item.output_tokens), o_.fixed_length};
    if (conn->tls) {
      error = co_await ReadTlsResponse(*conn, rec, deadline, expected, reusable);
    } else {
      error = co_await ReadResponse(conn->tcp.socket(), rec, deadline, expected, reusable);
    }
    if (!reusable) conn.reset();
    co_return error;
  }

  // What the request asked for: how the output length is known without usage.
  struct Expected {
    int64_t output_tokens = 0;
    bool fixed_length = true;
  };

  // What the response has said so far.
  struct Reading {
    Reading(RequestRecord& r, Expected e) : rec(r), expected(e) {}
    RequestRecord& rec;
    Expected expected;
    unsigned status = 0;
    bool sse = false;
    bool any_byte = false;  // something of the response arrived
    std::string text;       // the start of an error or non-SSE body
    SseParser sse_parser;
    std::vector<SseEvent> events;
    bool done = false;
    bool finished = false;  // a choice's finish_reason arrived
    bool saw_usage = false;
    bool usage_per_chunk = true;  // every token chunk so far carried usage (continuous_usage_stats)
    int64_t counted = 0;    // tokens in the chunks so far
  };

  static std::string CutMessage(const Reading& r) {
    return "closed mid-stream after " + std::to_string(r.counted) + " tokens";
  }

  // Body bytes that arrived at `t`; "" or why the response is unusable.
  static std::string Consume(Reading& r, std::string_view bytes, double t) {
    if (r.status != 200 || !r.sse) {
      r.text.append(bytes.substr(0, 300 - std::min<size_t>(300, r.text.size())));
      return "";
    }
    r.events.clear();
    r.sse_parser.Feed(bytes, r.events);
    if (r.sse_parser.too_long()) {
      return fmt::format("SSE line too long (over {} bytes) after {} tokens", SseParser::kMaxLineBytes, r.counted);
    }
    for (const SseEvent& e : r.events) {
      if (r.done) continue;
      auto c = ParseStreamChunk(e.data);
      if (!c.ok()) return c.status().message();
      r.done = c->done;
      r.finished = r.finished || c->finish_reason.has_value();
      int32_t tokens = c->tokens;
      if (tokens > 0 && !c->completion_tokens) r.usage_per_chunk = false;
      if (c->completion_tokens) {
        // Continuous usage: the count grew by what this chunk carries, its
        // text shown or not (0 when it only releases text of tokens counted
        // before, e.g. the rest of a UTF-8 character; N for tokens whose text
        // is held back or empty). A server that sends usage only at the end
        // counts one token per chunk with text — or, when no chunk had text,
        // its tokens at that end.
        const int64_t grew = *c->completion_tokens - (r.saw_usage ? r.rec.n_out : 0);
        if (r.usage_per_chunk) tokens = static_cast<int32_t>(std::max<int64_t>(0, grew));
        r.rec.n_out = *c->completion_tokens;
        r.saw_usage = true;
      }
      if (tokens > 0) {
        r.rec.chunks.push_back({t, tokens});
        if (!r.rec.t_first) r.rec.t_first = t;
        r.rec.t_last = t;
        r.counted += tokens;
      }
      if (c->prompt_tokens) r.rec.n_in = *c->prompt_tokens;
    }
    return "";
  }

  static constexpr size_t kMaxUnparsedBytes = 64 << 10;

  // Parses what `buffer` holds; "" or the failure.
  std::string Parse(http::response_parser<http::buffer_body>& parser, beast::flat_buffer& buffer, Reading& r,
                    double t) {
    char chunk[16384];
    while (buffer.size() > 0 && !parser.is_done()) {
      const bool header_done = parser.is_header_done();
      if (header_done) {
        parser.get().body().data = chunk;
        parser.get().body().size = sizeof(chunk);
      }
      boost::system::error_code ec;
      buffer.consume(parser.put(buffer.data(), ec));
      if (ec == http::error::need_more) {
        // Beast waits for a whole chunk-size line (extensions included): a
        // server sending an endless one would have us buffer it all.
        if (buffer.size() > kMaxUnparsedBytes) {
          return fmt::format("bad HTTP response: over {} KiB without a complete chunk line", kMaxUnparsedBytes >> 10);
        }
        return "";
      }
      if (ec && ec != http::error::need_buffer) return "bad HTTP response: " + ec.message();
      if (!header_done && parser.is_header_done()) {
        r.status = parser.get().result_int();
        r.sse = parser.get()[http::field::content_type].starts_with("text/event-stream");
        continue;
      }
      if (header_done) {
        std::string err = Consume(r, std::string_view(chunk, sizeof(chunk) - parser.get().body().size), t);
        if (!err.empty()) return err;
      }
    }
    return "";
  }

  // Reads the response with the kernel's receive time of every read (see
  // timestamped_read.h), parsing as bytes arrive.
  awaitable<std::string> ReadResponse(tcp::socket& socket, RequestRecord& rec, double deadline, Expected expected,
                                      bool& reusable) {
    http::response_parser<http::buffer_body> parser;
    parser.body_limit(boost::none);
    beast::flat_buffer buffer;
    Reading r{rec, expected};
    net::steady_timer timer(ioc_, Seconds(deadline - clock_.Now()));
    bool timed_out = false;
    timer.async_wait([&](const boost::system::error_code& ec) {
      if (ec) return;  // cancelled: the response ended first
      timed_out = true;
      socket.cancel();
    });
    std::string error;
    while (error.empty() && !parser.is_done()) {
      auto [wec] = co_await socket.async_wait(tcp::socket::wait_read, kNoThrow);
      if (timed_out) co_return Timeout();
      if (wec) co_return "read: " + wec.message();
      const TimedRead read = ReadTimestamped(socket.native_handle(), buffer.prepare(65536).data(), 65536);
      if (read.would_block) continue;
      if (read.error) co_return std::string("read: ") + std::strerror(read.error);
      const double t = read.received ? clock_.Now() - SecondsSinceRealtime(*read.received) - t0_ : Now();
      if (read.eof) {
        if (!r.any_byte) co_return kClosedBeforeAnswer;
        boost::system::error_code ec;
        parser.put_eof(ec);
        if (ec || !parser.is_done()) co_return CutMessage(r);
        break;
      }
      r.any_byte = true;
      buffer.commit(read.bytes);
      error = Parse(parser, buffer, r, t);
    }
    timer.cancel();
    if (!error.empty()) co_return error;
    co_return Finish(parser, r, reusable);
  }

  // The verdict on a complete response: "" or why it is not a good answer.
  static std::string Finish(http::response_parser<http::buffer_body>& parser, Reading& r, bool& reusable) {
    reusable = parser.get().keep_alive();
    if (r.status != 200) return fmt::format("HTTP {}: {}", r.status, r.text);
    if (!r.sse)
      return "not an SSE stream (content-type '" + std::string(parser.get()[http::field::content_type]) + "')";
    // A fixed-length answer that ended cleanly with its finish reason (or all
    // its tokens) is whole, even without usage and [DONE].
    const bool whole = r.expected.fixed_length && (r.finished || r.counted >= r.expected.output_tokens);
    if (!r.done && !r.saw_usage && !whole) return CutMessage(r) + " (no [DONE])";
    std::vector<std::string> notes;
    if (!r.done) {
      notes.push_back(r.saw_usage ? "the stream ended cleanly after its usage chunk but without [DONE]"
                                  : "the stream ended cleanly after its last token but without usage or [DONE]");
    }
    if (!r.saw_usage && r.expected.fixed_length) {
      r.rec.n_out = r.expected.output_tokens;
      notes.push_back("no usage chunk: output length from the fixed length asked");
    } else if (!r.saw_usage) {
      r.rec.n_out = r.counted;
      notes.push_back("WARNING: no usage chunk: output tokens counted from chunks (a chunk may carry several "
                      "tokens, so TPOT may be wrong)");
    }
    if (r.rec.n_out > r.counted && !r.rec.chunks.empty()) {
      // No running count told what each chunk carried: ITL per token is the
      // chunk gap over its share, and throughput counts every token.
      SpreadTokensOverChunks(r.rec.chunks, r.rec.n_out);
      notes.push_back("fewer chunks than tokens and no running usage: the tokens spread evenly over the chunks");
    }
    for (const std::string& n : notes) r.rec.note += (r.rec.note.empty() ? "" : "; ") + n;
    return "";
  }

  // The same over TLS: the kernel's timestamps are of encrypted records, so
  // token times are taken when the decrypted bytes reach the client.
  awaitable<std::string> ReadTlsResponse(Connection& c, RequestRecord& rec, double deadline, Expected expected,
                                         bool& reusable) {
    http::response_parser<http::buffer_body> parser;
    parser.body_limit(boost::none);
    beast::flat_buffer buffer;
    Reading r{rec, expected};
    c.tcp.expires_after(Seconds(deadline - clock_.Now()));
    std::string error;
    while (error.empty() && !parser.is_done()) {
      auto [ec, n] = co_await c.tls->async_read_some(buffer.prepare(65536), kNoThrow);
      const double t = Now();
      if (ec == beast::error::timeout) co_return Timeout();
      if (ec == net::error::eof || ec == net::ssl::error::stream_truncated) {
        boost::system::error_code eof;
        if (!r.any_byte) co_return kClosedBeforeAnswer;
        parser.put_eof(eof);
        if (eof || !parser.is_done()) co_return CutMessage(r);
        break;
      }
      if (ec) co_return "read: " + ec.message();
      r.any_byte = true;
      buffer.commit(n);
      error = Parse(parser, buffer, r, t);
    }
    if (!error.empty()) co_return error;
    co_return Finish(parser, r, reusable);
  }

  std::string Timeout() const { return fmt::format("timeout after {:g} s", o_.timeout_s); }

  const LoadOptions& o_;
  const Workload& w_;
  const Clock& clock_;
  Workload workload_;
  RequestGenerator gen_;
  net::io_context ioc_{1};
  std::optional<net::ssl::context> ssl_;  // https targets
  std::vector<Conn> idle_;
  tcp::resolver::results_type resolved_;
  std::vector<RequestRecord> records_;
  std::vector<bool> stored_;
  int64_t finished_ = 0;
  bool done_ = false;
  net::steady_timer stop_timer_{ioc_};
  double t0_ = 0;
};

}  // namespace

Result<std::vector<RequestRecord>> RunLoad(const LoadOptions& options, const Workload& workload,
                                           const ArrivalSpec& load, const Clock& clock) {
  if (workload.classes.empty()) return Status::InvalidArgument("the workload has no request classes");
  Run run(options, workload, load, clock);
  std::vector<RequestRecord> records = run.Go();
  if (records.empty()) return Status::InvalidArgument("the workload issued no requests");
  return records;
}

}  // namespace goodput::client
