#include "sim/sim_target.h"

#include <gtest/gtest.h>

#include "measure/measurement.h"

namespace goodput {
namespace {

Workload Small(int64_t requests, const std::string& slo) {
  Workload w = FixedLengthWorkload(requests, 16, 8, "interactive");
  w.classes[0].slo = ParseSlo("interactive: " + slo)->classes.at(0);
  return w;
}

TEST(SimTarget, RunsTheSimulator) {
  auto setup = SetupCatalogSimulation("llama-3.1-8b", "h100", PlanOptions{});
  ASSERT_TRUE(setup.ok()) << setup.status().message();
  SimTarget target(std::move(*setup), "sim:h100 (llama-3.1-8b, engine defaults)");
  ArrivalSpec load;
  load.concurrency = 8;
  auto point = MeasurePoint(target, Small(200, "tpot p90 <= 100ms"), load, Repetitions{2, 2});
  ASSERT_TRUE(point.ok());
  EXPECT_TRUE(point->holds());
  EXPECT_EQ(point->failed, 0);
  EXPECT_EQ(point->send_lag_p99, 0);
  EXPECT_NE(target.Describe().find("sim:h100"), std::string::npos);
  // The planned pool's start-up lines, as vLLM prints them.
  EXPECT_NE(target.StartupLines().find("GPU KV cache size: "), std::string::npos) << target.StartupLines();
}

}  // namespace
}  // namespace goodput
