// How fast the simulator runs: 100,000 chat requests (lognormal prompts with
// mean 1,000 tokens, outputs with mean 250) at concurrency 256 on one core.
// Target: at most 2 s of wall time per run. Prints requests and steps
// simulated per second of wall time.
//
//   build/perf/sim_throughput [runs]
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "core/clock.h"
#include "core/stats.h"
#include "hw/hardware.h"
#include "model/catalog.h"
#include "sim/setup.h"

using namespace goodput;

int main(int argc, char** argv) {
  const int runs = argc > 1 ? std::atoi(argv[1]) : 3;
  Workload w;
  w.name = "chat-100k";
  w.requests = argc > 2 ? std::atoll(argv[2]) : 100000;
  RequestClass c;
  c.name = "interactive";
  c.prompt = *LengthDistribution::FromSpec("lognormal:1k,0.8");
  c.output = *LengthDistribution::FromSpec("lognormal:250,0.6");
  w.classes.push_back(c);
  PlanOptions po;
  po.engine.scheduler.max_model_len = 32768;
  auto setup = SetupCatalogSimulation("llama-3.1-8b", "h100-sxm", po);
  if (!setup.ok()) {
    std::fprintf(stderr, "%s\n", setup.status().message().c_str());
    return 1;
  }
  RealClock clock;
  std::printf("%-5s %10s %10s %14s %12s %12s\n", "run", "wall s", "steps", "requests/s", "steps/s", "sim s");
  std::vector<double> walls;
  for (int r = 1; r <= runs; ++r) {
    SimOptions o = setup->options;
    o.seed = static_cast<uint64_t>(r);
    const double t0 = clock.Now();
    auto run = Simulate(w, ArrivalSpec{ArrivalKind::kClosedLoop, 256, 1, 1}, o, *setup->cost);
    const double wall = clock.Now() - t0;
    if (!run.ok()) {
      std::fprintf(stderr, "%s\n", run.status().message().c_str());
      return 1;
    }
    walls.push_back(wall);
    std::printf("%-5d %10.3f %10lld %14.0f %12.0f %12.1f\n", r, wall, static_cast<long long>(run->steps),
                static_cast<double>(w.requests) / wall, static_cast<double>(run->steps) / wall,
                run->simulated_seconds);
  }
  const double median = *Median(walls);
  std::printf("median wall time %.3f s for %lld requests: %s the 2 s target\n", median,
              static_cast<long long>(w.requests), median <= 2.0 ? "within" : "OVER");
  return 0;
}
