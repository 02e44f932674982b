// The simulator calibrated from goodput serve's own steps against goodput
// serve over real HTTP: a short chat workload at two loads, side by side (the
// full comparison, with its targets, is bench/sim_vs_serve). The calibration
// run serves the same workload with another seed (other requests) and logs
// its steps. The bounds are loose enough for a shared 2-core machine and tight
// enough to catch a simulator wrong by a factor: a cost model off by 2x, a
// missing wait for the running step, a pool of another size.
#include <cmath>
#include <cstdio>

#include <gtest/gtest.h>

#include "calibrate/engine_calibration.h"
#include "calibrate/validation.h"

namespace goodput {
namespace {

constexpr char kWorkload[] = R"(name: chat-small
seed: 3
requests: 32
warmup: 10%
cooldown: 10%
classes:
  - name: interactive
    prompt: lognormal:96,0.5
    output: lognormal:24,0.4
    slo: ttft p90 <= 2s, tpot p90 <= 200ms
)";

TEST(SimVsServe, TheCalibratedSimulatorPredictsTheRealEngine) {
  server::ServeConfig config;
  config.model = "goodput-small";
  config.engine.cache.kv_cache_memory = int64_t{128} << 20;
  auto w = ParseWorkload(kWorkload, "chat-small", ".");
  ASSERT_TRUE(w.ok()) << w.status().message();
  MeasurementSpec spec;
  spec.workload = *w;
  for (int c : {2, 8}) spec.loads.push_back(ArrivalSpec{ArrivalKind::kClosedLoop, c, 1, 1});
  ServeRun calibration_run{config, spec};
  calibration_run.spec.workload.seed += 1000;
  auto cal = CalibrateFromServeRuns(GOODPUT_BINARY, {calibration_run});
  ASSERT_TRUE(cal.ok()) << cal.status().message();
  std::printf("%s\n", FormatResiduals(*cal).c_str());
  auto cmp = CompareSimToServe(GOODPUT_BINARY, config, *cal, spec);
  ASSERT_TRUE(cmp.ok()) << cmp.status().message();
  std::printf("%s\n", FormatComparison(*cmp).c_str());
  ASSERT_EQ(cmp->rows.size(), 2u);
  for (const Comparison::Row& r : cmp->rows) {
    const auto ratio = [](double sim, double serve) { return serve > 0 ? sim / serve : NAN; };
    EXPECT_NEAR(ratio(r.sim.throughput, r.serve.throughput), 1.0, 0.25) << "throughput at " << r.serve.label;
    EXPECT_NEAR(ratio(r.sim.tpot.p50, r.serve.tpot.p50), 1.0, 0.30) << "TPOT p50 at " << r.serve.label;
    EXPECT_NEAR(ratio(r.sim.ttft.p50, r.serve.ttft.p50), 1.0, 0.40) << "TTFT p50 at " << r.serve.label;
    EXPECT_EQ(r.serve.preemptions, 0) << "goodput serve's /metrics counts preemptions";
  }
}

}  // namespace
}  // namespace goodput
