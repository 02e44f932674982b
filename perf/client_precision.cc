// How precisely goodput's load generator measures, against a local fake SSE
// server (tests/support/fake_sse_server.h) that records when it wrote every
// token. Three figures, each measured in this run:
//   1. timestamp error: how far the client's time for a token chunk lies
//      outside [just before, just after] the server's write call (the true
//      send time is somewhere in there), p50/p99/max, over 1,000 concurrent
//      streams whose tokens come out in bursts, as a server's batched steps
//      emit them (target p99 < 1 ms);
//   2. open-loop send lag: t_sent - scheduled arrival at 1,000 requests/s
//      (target p99 < 1 ms);
//   3. token events per second one client core handles (target >= 100,000):
//      the client thread's own CPU time, not wall time.
//
//   build/perf/client_precision
#include <algorithm>
#include <cstdio>

#include "support/fake_sse_server.h"
#include "client/load_client.h"
#include "core/clock.h"
#include "core/stats.h"

using namespace goodput;
using namespace goodput::client;
using goodput::testing::FakeSseServer;

namespace {

struct Run {
  std::vector<RequestRecord> records;
  double start = 0;
  double client_cpu_s = 0;
};

Run Load(const FakeSseServer& server, const Workload& w, const ArrivalSpec& load, const Clock& clock) {
  LoadOptions o;
  o.endpoint.port = server.port();
  o.model = "ok";
  o.timeout_s = 120;
  Run run;
  o.start_time = &run.start;
  const double cpu0 = ThreadCpuSeconds();
  run.records = RunLoad(o, w, load, clock).value();
  run.client_cpu_s = ThreadCpuSeconds() - cpu0;
  return run;
}

void Print(const char* what, const std::vector<double>& v, const char* target) {
  std::printf("%-44s %9.3f %9.3f %9.3f   %s\n", what, *Percentile(v, 50) * 1e3, *Percentile(v, 99) * 1e3,
              *std::max_element(v.begin(), v.end()) * 1e3, target);
}

}  // namespace

int main() {
  RealClock clock;
  std::printf("%-44s %9s %9s %9s   %s\n", "", "p50 ms", "p99 ms", "max ms", "target");
  {  // 1. 1,000 concurrent streams, 40 tokens each 40 ms apart (25 tokens/s per user, 25,000 events/s)
    auto server = std::move(FakeSseServer::Start({0.02, 0.04}, clock).value());
    ArrivalSpec closed;
    closed.concurrency = 1000;
    const Run run = Load(*server, FixedLengthWorkload(1000, 4, 40), closed, clock);
    std::vector<double> errors, write_calls;
    int64_t failed = 0;
    for (size_t i = 0; i < run.records.size(); ++i) {
      const RequestRecord& r = run.records[i];
      failed += !r.ok;
      const auto writes = server->TokenWrites(static_cast<int64_t>(i));
      for (size_t k = 0; k < r.chunks.size() && k < writes.size(); ++k) {
        const double t = run.start + r.chunks[k].t;
        errors.push_back(t < writes[k].before ? writes[k].before - t : std::max(0.0, t - writes[k].after));
        write_calls.push_back(writes[k].after - writes[k].before);
      }
    }
    Print("timestamp error, 1,000 concurrent streams", errors, "p99 < 1 ms");
    Print("  (the server's write calls took)", write_calls, "");
    std::printf("  (%zu token chunks, %lld failed requests)\n", errors.size(), static_cast<long long>(failed));
  }
  {  // 2. open loop at 1,000 requests/s for 5 s
    auto server = std::move(FakeSseServer::Start({0.005, 0.005}, clock).value());
    ArrivalSpec poisson;
    poisson.kind = ArrivalKind::kPoisson;
    poisson.rate = 1000;
    const Run run = Load(*server, FixedLengthWorkload(5000, 4, 4), poisson, clock);
    std::vector<double> lags;
    for (const auto& r : run.records) lags.push_back(SendLag(r));
    Print("send lag, open loop at 1,000 requests/s", lags, "p99 < 1 ms");
  }
  {  // 3. token events per client core: 200 streams of 2,000 tokens as fast as the server writes
    auto server = std::move(FakeSseServer::Start({0.0, 0.0}, clock).value());
    ArrivalSpec closed;
    closed.concurrency = 200;
    const double t0 = clock.Now();
    const Run run = Load(*server, FixedLengthWorkload(200, 4, 2000), closed, clock);
    const double wall = clock.Now() - t0;
    int64_t events = 0;
    for (const auto& r : run.records) events += static_cast<int64_t>(r.chunks.size());
    std::printf("%-44s %9.0f per CPU second of the client thread (%.0f per wall second)   target >= 100,000\n",
                "token events", events / run.client_cpu_s, events / wall);
  }
  return 0;
}
