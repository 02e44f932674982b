// A fleet on the simulator against a fleet of goodput serve processes: two
// (--replicas) goodput serve processes on this machine, the client routing
// each request among them (bench --target URL1,URL2 --router), against
// `goodput sim --replicas 2 --router` calibrated from the fleet's own steps
// — each load predicted from the steps every engine process took at the
// other loads (leave one load out, as perf/sim_vs_serve does for one
// engine). The workload shares prompt prefixes, so the router's choice shows
// in each server's prefix cache. Prints each load's figures side by side
// with the simulator's error, both prefix-cache hit rates and the busiest
// instance's share, both capacities, and the scores against the targets: the
// same capacity (within one ladder step), every hit rate within 5 points,
// TTFT and TPOT p50 within 10%, p99 within 15%, throughput within 5%.
//
// The processes share this machine's cores (each engine runs two threads),
// so a step on one instance is slower while the other steps: the fit sees it
// in the steps it is given, averaged over the loads it was not asked about.
// goodput-small, not goodput-tiny: tiny's steps take tenths of a millisecond,
// under what the step fit resolves beside the HTTP work even for one engine
// (rms log error 0.38-0.55 over one process's steps, TTFT p50 29-64% low);
// its hit rates agree within 1.6 points (--model goodput-tiny --kv-cache-memory
// 64MiB).
//
// Usage: fleet_vs_serve [GOODPUT_BINARY] [--model M] [--replicas N]
//          [--router POLICY] [--workload FILE] [--concurrency 2,4,...]
//          [--kv-cache-memory SIZE] [--repeat R] [--dir DIR] [--replay]
//   (default: the goodput binary beside this program's directory,
//   goodput-small with a 256MiB pool each, 2 replicas, prefix-affinity,
//   data/workloads/rag-cpu.yaml, 2 repetitions;
//   DIR, default ./fleet_vs_serve, keeps the step logs and the ledger of
//   goodput serve's runs; --replay reads them back and runs only the
//   simulator's side again)
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "client/load_client.h"
#include "core/data_dir.h"
#include "core/units.h"
#include "validation/sim_vs_serve_harness.h"

using namespace goodput;

namespace {

struct Args {
  std::string binary, model = "goodput-small", router = "prefix-affinity", workload, pool = "256MiB";
  std::string dir = "fleet_vs_serve";
  int replicas = 2, repeat = 2;
  std::vector<int> ladder = {2, 4, 8, 16, 32};
  bool replay = false;
};

Result<ComparisonCase> CaseFor(const Args& a) {
  GOODPUT_ASSIGN_OR_RETURN(Workload w, LoadWorkload(a.workload));
  ComparisonCase c;
  c.config.model = a.model;
  const auto pool = ParseBytes(a.pool);
  if (!pool.ok()) return pool.status().WithContext("--kv-cache-memory");
  c.config.engine.cache.kv_cache_memory = *pool;
  c.replicas = a.replicas;
  GOODPUT_ASSIGN_OR_RETURN(c.router, client::ClientRouterFromName(a.router));
  c.spec.workload = w;
  for (int n : a.ladder) c.spec.loads.push_back(ArrivalSpec{ArrivalKind::kClosedLoop, n, 1, 1});
  c.spec.repeat = c.spec.max_repeat = a.repeat;
  c.spec.workload.requests = RequestsToBoundP99(w, a.repeat, a.ladder.back());
  return c;
}

}  // namespace

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  Args a;
  a.binary = std::filesystem::read_symlink("/proc/self/exe").parent_path().string() + "/../goodput";
  a.workload = DataDir() + "/workloads/rag-cpu.yaml";
  CLI::App app{"A fleet of goodput serve processes against the simulator's fleet, calibrated from their steps"};
  app.add_option("binary", a.binary, "The goodput executable");
  app.add_option("--model", a.model, "goodput serve's model");
  app.add_option("--replicas", a.replicas, "goodput serve processes")->check(CLI::Range(1, 8));
  app.add_option("--router", a.router, "The client's routing: " + RouterPolicyNames());
  app.add_option("--workload", a.workload, "A workload file");
  app.add_option("--concurrency", a.ladder, "Closed-loop clients, ascending")->delimiter(',');
  app.add_option("--kv-cache-memory", a.pool, "Each server's KV pool");
  app.add_option("--repeat", a.repeat, "Repetitions of each load (each on fresh processes)")->check(CLI::Range(1, 5));
  app.add_option("--dir", a.dir, "Where the step logs and goodput serve's ledger are kept");
  app.add_flag("--replay", a.replay, "Read goodput serve's side back from --dir; run only the simulator");
  CLI11_PARSE(app, argc, argv);
  if (a.ladder.empty() || !std::is_sorted(a.ladder.begin(), a.ladder.end()) || a.ladder.front() < 1) {
    return std::fprintf(stderr, "--concurrency: ascending client counts, each at least 1\n"), 2;
  }
  auto c = CaseFor(a);
  if (!c.ok()) return std::fprintf(stderr, "%s\n", c.status().message().c_str()), 2;
  const std::filesystem::path dir = a.dir;
  const HeldOutOptions kept{(dir / "steps").string(), false, (dir / "serve.db").string()};
  const auto progress = [](const std::string& line) { std::fprintf(stderr, "\r\033[K%s", line.c_str()); };
  auto held_out = a.replay ? ReplaySimToServeHeldOut({*c}, progress, kept)
                           : CompareSimToServeHeldOut(a.binary, {*c}, progress, kept);
  std::fprintf(stderr, "\r\033[K");
  if (!held_out.ok()) return std::fprintf(stderr, "%s\n", held_out.status().message().c_str()), 2;
  const Comparison& cmp = held_out->cases.front();
  std::printf("%d x goodput serve --model %s, router %s\n%s\n", a.replicas, a.model.c_str(), a.router.c_str(),
              FormatComparison(cmp).c_str());
  const FigureScore figures = ScoreSimulator(cmp), hits = ScoreHitRates(cmp);
  std::printf("figures within their targets (p50 10%%, p99 15%%, throughput 5%%): %d of %d\n", figures.met,
              figures.total);
  std::printf("prefix-cache hit rates within 5 points: %d of %d\n", hits.met, hits.total);
  std::printf("capacity within one ladder step: %s\n", cmp.capacity_steps_apart <= 1 ? "yes" : "no");
  return 0;
}
