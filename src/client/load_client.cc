#include "client/load_client.h"

#include <sys/prctl.h>
#include <sys/socket.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <deque>
#include <memory>
#include <optional>
#include <thread>

#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast.hpp>
#include <fmt/format.h>

#include "client/openai_stream.h"
#include "client/response_reading.h"
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
  Connection(net::io_context& ioc, size_t to) : tcp(ioc), endpoint(to) {}
  beast::tcp_stream tcp;
  size_t endpoint;  // which of the run's endpoints it is connected to
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

// The workload one shard runs: a closed loop's share of the requests, drawn
// with the shard's own seed (an open loop's shards split one schedule).
Workload ShardOf(Workload w, const ArrivalSpec& load, const LoadOptions& o) {
  if (o.shards <= 1 || load.kind != ArrivalKind::kClosedLoop) return w;
  const int clients = (load.concurrency - o.shard + o.shards - 1) / o.shards;
  w.requests = std::max<int64_t>(1, w.requests * clients / std::max(1, load.concurrency));
  w.seed += static_cast<uint64_t>(o.shard) * 7919;
  return w;
}

// Sleeps until the wall clock reads `epoch_s` (no wait once it has passed).
void WaitForWallClock(double epoch_s) {
  const auto at = std::chrono::system_clock::time_point(
      std::chrono::duration_cast<std::chrono::system_clock::duration>(std::chrono::duration<double>(epoch_s)));
  std::this_thread::sleep_until(at);
}

class Run {
 public:
  Run(const LoadOptions& o, const Workload& w, const ArrivalSpec& load, const Clock& clock)
      : o_(o),
        w_(w),
        clock_(clock),
        workload_(ShardOf(ForRepetition(w, o.seed), load, o)),
        gen_(workload_, load),
        endpoints_(AllEndpoints(o)),
        router_(o.router),
        idle_(endpoints_.size()),
        resolved_(endpoints_.size()),
        outstanding_(endpoints_.size(), 0),
        routed_(endpoints_.size(), 0) {
    const bool tls = std::any_of(endpoints_.begin(), endpoints_.end(), [](const Endpoint& e) { return e.tls; });
    if (tls) {
      ssl_.emplace(net::ssl::context::tls_client);
      ssl_->set_default_verify_paths();
      ssl_->set_verify_mode(o.insecure_tls ? net::ssl::verify_none : net::ssl::verify_peer);
    }
  }

  std::vector<RequestRecord> Go() {
    // Timers fire up to 50 us late by default (the kernel's timer slack);
    // open-loop sends should not.
    prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
    if (o_.start_at_epoch) WaitForWallClock(*o_.start_at_epoch);
    t0_ = clock_.Now();
    if (o_.start_time) *o_.start_time = t0_;
    for (int c = o_.shard; c < gen_.closed_clients(); c += o_.shards) {
      ++closed_running_;
      net::co_spawn(ioc_, ClosedClient(c), net::detached);
    }
    net::co_spawn(ioc_, OpenArrivals(), net::detached);
    if (o_.stop) net::co_spawn(ioc_, WatchStop(), net::detached);
    ioc_.run();
    if (o_.routed) *o_.routed = routed_;
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

  // A closed-loop client: its next request when the last one ends (a
  // conversation's next turn, or the workload's next request, after its
  // think time).
  awaitable<void> ClosedClient(int client) {
    Conn conn;
    net::steady_timer think(ioc_);
    std::optional<WorkItem> item = gen_.NextForClient(client, Now());
    if (item) ++launched_;
    while (item && !Stopped()) {
      const size_t to = Route(*item);
      if (conn && conn->endpoint != to) conn.reset();  // its connection is to another endpoint
      std::optional<WorkItem> next = co_await Send(*item, conn, to);
      if (!next && (next = gen_.NextForClient(client, Now()))) ++launched_;
      if (next && next->t_arrival > Now()) {
        think.expires_after(Seconds(next->t_arrival - Now()));
        co_await think.async_wait(kNoThrow);
      }
      item = std::move(next);
    }
    --closed_running_;
    MaybeDone();
  }

  awaitable<void> OpenArrivals() {
    net::steady_timer timer(ioc_);
    while (auto t = gen_.NextOpenArrival()) {
      const WorkItem item = gen_.PopOpen();
      if (item.index % o_.shards != o_.shard) continue;  // another shard's
      timer.expires_after(Seconds(*t - Now()));  // the absolute schedule, re-read every time
      co_await timer.async_wait(kNoThrow);
      if (Stopped()) break;
      ++launched_;
      net::co_spawn(ioc_, SendPooled(item), net::detached);
    }
    open_done_ = true;
    MaybeDone();
  }

  // The run is over once every arrival was sent and every request it sent
  // ended: the stop watcher may go.
  void MaybeDone() {
    if (!open_done_ || closed_running_ > 0 || finished_ < launched_ || done_) return;
    done_ = true;
    stop_timer_.cancel();
  }

  awaitable<void> SendPooled(WorkItem item) {
    Conn conn;
    const size_t to = Route(item);
    if (!idle_[to].empty()) {
      conn = std::move(idle_[to].back());
      idle_[to].pop_back();
    }
    std::optional<WorkItem> next = co_await Send(item, conn, to);
    if (conn) idle_[to].push_back(std::move(conn));
    if (!next || Stopped()) co_return;
    net::steady_timer think(ioc_, Seconds(next->t_arrival - Now()));
    co_await think.async_wait(kNoThrow);
    co_await SendPooled(std::move(*next));
  }

  // The endpoint `item` goes to (the only one, or the router's pick over
  // the requests each has in flight).
  size_t Route(const WorkItem& item) {
    if (endpoints_.size() == 1) return 0;
    std::vector<ReplicaLoad> loads(endpoints_.size());
    for (size_t k = 0; k < loads.size(); ++k) loads[k].outstanding = outstanding_[k];
    return static_cast<size_t>(router_.Pick(item, loads));
  }

  // Sends one request to endpoint `to` on `conn` (connecting when empty) and
  // records it; the connection is left empty when it cannot be reused. The
  // conversation's next turn, when it was answered in full and goes on.
  awaitable<std::optional<WorkItem>> Send(const WorkItem& item, Conn& conn, size_t to) {
    ++outstanding_[to], ++routed_[to];
    RequestRecord rec;
    rec.request_class = w_.classes[item.class_index].name;
    rec.first_wave = item.first_wave;
    rec.t_arrival = item.t_arrival;
    rec.n_in = item.prompt_tokens;
    const double deadline = clock_.Now() + o_.timeout_s;
    std::string error = co_await Exchange(item, conn, rec, deadline, to);
    --outstanding_[to];
    std::optional<WorkItem> next;
    if (!error.empty()) {
      rec.ok = false;
      rec.error = std::move(error);
      conn.reset();
    } else if ((next = gen_.NextTurn(item, Now()))) {
      ++launched_;  // counted before this one is stored: the run is not over while it thinks
    }
    Store(item.index, std::move(rec));
    co_return next;
  }

  void Store(int64_t index, RequestRecord rec) {
    if (static_cast<int64_t>(records_.size()) <= index) {
      records_.resize(index + 1);
      stored_.resize(index + 1, false);
    }
    records_[index] = std::move(rec);
    stored_[index] = true;
    ++finished_;
    if (o_.progress) o_.progress(finished_, (gen_.budget() + o_.shards - 1 - o_.shard) / o_.shards);
    MaybeDone();
  }

  http::request<http::string_body> MakeRequest(const WorkItem& item, const Endpoint& e) const {
    GenerationBody b;
    b.model = o_.model;
    b.chat = o_.chat;
    b.prompt_ids = PromptTokenIds(item, workload_.seed, o_.prompt_salt);
    b.max_tokens = std::max<int64_t>(1, item.output_tokens);
    b.fixed_length = o_.fixed_length;
    b.priority = w_.classes[item.class_index].priority;
    http::request<http::string_body> req{http::verb::post,
                                         e.api_prefix + (o_.chat ? "/chat/completions" : "/completions"), 11};
    req.set(http::field::host, e.host);
    req.set(http::field::content_type, "application/json");
    req.set(http::field::accept, "text/event-stream");
    req.set("x-goodput-request", std::to_string(item.index));  // for server-side logs (and our fake server)
    req.set("x-goodput-class", w_.classes[item.class_index].name);
    if (!e.api_key.empty()) req.set(http::field::authorization, "Bearer " + e.api_key);
    req.keep_alive(true);
    req.body() = MakeRequestBody(b);
    req.prepare_payload();
    return req;
  }

  awaitable<std::string> Connect(Conn& conn, double deadline, size_t to) {
    conn = std::make_unique<Connection>(ioc_, to);
    const Endpoint& e = endpoints_[to];
    const std::string host = e.host, port = std::to_string(e.port);
    if (resolved_[to].empty()) {  // once per run: the resolver's thread hop costs a send hundreds of microseconds
      tcp::resolver resolver(ioc_);
      auto [rec, results] = co_await resolver.async_resolve(host, port, kNoThrow);
      if (rec) co_return "resolve " + host + ": " + rec.message();
      resolved_[to] = results;
    }
    conn->tcp.expires_after(Seconds(deadline - clock_.Now()));
    auto [ec, ep] = co_await conn->tcp.async_connect(resolved_[to], kNoThrow);
    if (ec) co_return "connect " + host + ":" + port + ": " + ec.message();
    EnableReceiveTimestamps(conn->tcp.socket().native_handle());  // without them, token times are the client's own
    boost::system::error_code ignored;
    conn->tcp.socket().set_option(tcp::no_delay(true), ignored);  // a request is never held back for an ACK
    if (!e.tls) co_return std::string();
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
  awaitable<std::string> Exchange(const WorkItem& item, Conn& conn, RequestRecord& rec, double deadline, size_t to) {
    auto req = MakeRequest(item, endpoints_[to]);
    if (conn && !StillOpen(*conn)) conn.reset();
    const bool reused = conn != nullptr;
    std::string error = co_await Attempt(req, item, conn, rec, deadline, to);
    if (reused && (error == kClosedBeforeAnswer || error.rfind("send: ", 0) == 0)) {
      conn.reset();
      error = co_await Attempt(req, item, conn, rec, deadline, to);
    }
    co_return error;
  }

  awaitable<std::string> Attempt(http::request<http::string_body>& req, const WorkItem& item, Conn& conn,
                                 RequestRecord& rec, double deadline, size_t to) {
    if (!conn) {
      std::string err = co_await Connect(conn, deadline, to);
      if (!err.empty()) co_return err;
    }
    rec.t_sent = Now();
    conn->tcp.expires_after(Seconds(deadline - clock_.Now()));
    const boost::system::error_code wec = co_await Write(*conn, req);
    if (wec) co_return "send: " + wec.message();
    bool reusable = false;
    std::string error;
    const ExpectedOutput expected{std::max<int64_t>(1, item.output_tokens), o_.fixed_length};
    if (conn->tls) {
      error = co_await ReadTlsResponse(*conn, rec, deadline, expected, reusable);
    } else {
      error = co_await ReadResponse(conn->tcp.socket(), rec, deadline, expected, reusable);
    }
    if (!reusable) conn.reset();
    co_return error;
  }

  // Reads the response with the kernel's receive time of every read (see
  // timestamped_read.h), parsing as bytes arrive.
  awaitable<std::string> ReadResponse(tcp::socket& socket, RequestRecord& rec, double deadline, ExpectedOutput expected,
                                      bool& reusable) {
    ResponseParser parser;
    parser.body_limit(boost::none);
    beast::flat_buffer buffer;
    ResponseReading r{rec, expected};
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
      error = ParseReceived(parser, buffer, r, t);
    }
    timer.cancel();
    if (!error.empty()) co_return error;
    co_return FinishResponse(parser, r, reusable);
  }

  // The same over TLS: the kernel's timestamps are of encrypted records, so
  // token times are taken when the decrypted bytes reach the client.
  awaitable<std::string> ReadTlsResponse(Connection& c, RequestRecord& rec, double deadline, ExpectedOutput expected,
                                         bool& reusable) {
    ResponseParser parser;
    parser.body_limit(boost::none);
    beast::flat_buffer buffer;
    ResponseReading r{rec, expected};
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
      error = ParseReceived(parser, buffer, r, t);
    }
    if (!error.empty()) co_return error;
    co_return FinishResponse(parser, r, reusable);
  }

  std::string Timeout() const { return fmt::format("timeout after {:g} s", o_.timeout_s); }

  const LoadOptions& o_;
  const Workload& w_;
  const Clock& clock_;
  Workload workload_;
  RequestGenerator gen_;
  net::io_context ioc_{1};
  std::optional<net::ssl::context> ssl_;  // https targets
  std::vector<Endpoint> endpoints_;
  Router router_;
  std::vector<std::vector<Conn>> idle_;                // per endpoint
  std::vector<tcp::resolver::results_type> resolved_;  // per endpoint
  std::vector<int64_t> outstanding_, routed_;          // per endpoint: in flight, sent
  std::vector<RequestRecord> records_;
  std::vector<bool> stored_;
  int64_t finished_ = 0, launched_ = 0;
  int closed_running_ = 0;
  bool open_done_ = false;
  bool done_ = false;
  net::steady_timer stop_timer_{ioc_};
  double t0_ = 0;
};

}  // namespace

Result<RouterPolicy> ClientRouterFromName(const std::string& name) {
  const std::optional<RouterPolicy> router = RouterPolicyFromName(name);
  if (!router || *router == RouterPolicy::kLeastKv) {
    return Status::InvalidArgument(fmt::format(
        "--router '{}': one of round-robin, least-outstanding, prefix-affinity, session (least-kv needs the servers' "
        "KV usage, which a client does not see)",
        name));
  }
  return *router;
}

std::vector<Endpoint> AllEndpoints(const LoadOptions& o) {
  std::vector<Endpoint> all = {o.endpoint};
  all.insert(all.end(), o.more_endpoints.begin(), o.more_endpoints.end());
  return all;
}

Result<std::vector<RequestRecord>> RunLoad(const LoadOptions& options, const Workload& workload,
                                           const ArrivalSpec& load, const Clock& clock) {
  if (workload.classes.empty()) return Status::InvalidArgument("the workload has no request classes");
  if (!options.more_endpoints.empty() && options.router == RouterPolicy::kLeastKv) {
    return Status::InvalidArgument(
        "least-kv routing needs each server's KV usage, which a client does not see; "
        "use least-outstanding");
  }
  Run run(options, workload, load, clock);
  std::vector<RequestRecord> records = run.Go();
  if (records.empty()) return Status::InvalidArgument("the workload issued no requests");
  return records;
}

}  // namespace goodput::client
