#include "sim/simulator.h"

#include <gtest/gtest.h>

#include "core/data_dir.h"
#include "measure/run.h"
#include "model/catalog.h"
#include "sim/setup.h"

namespace goodput {
namespace {

TEST(Simulator, ChatOnLlama8BFinishesEveryRequest) {
  auto w = LoadWorkload(DataDir() + "/workloads/chat.yaml");
  ASSERT_TRUE(w.ok());
  PlanOptions po;
  po.engine.scheduler.max_model_len = 32768;
  auto setup = SetupCatalogSimulation("llama-3.1-8b", "h100-sxm", po);
  ASSERT_TRUE(setup.ok()) << setup.status().message();
  auto run = Simulate(*w, ArrivalSpec{ArrivalKind::kClosedLoop, 32, 1, 1}, setup->options, *setup->cost);
  ASSERT_TRUE(run.ok()) << run.status().message();
  ASSERT_EQ(run->records.size(), 2000u);
  for (const auto& r : run->records) {
    ASSERT_TRUE(r.ok);
    ASSERT_TRUE(r.t_first.has_value());
  }
  SloReport rep = Evaluate(run->records, w->Slo(), MeasurementWindow(*w, run->records));
  EXPECT_GT(rep.total, 1500);
  EXPECT_GT(rep.output_throughput, 0);
  std::printf("steps %lld, %.1f s simulated, %.0f tok/s, goodput %.2f req/s\n", (long long)run->steps,
              run->simulated_seconds, rep.output_throughput, rep.goodput);
}

}  // namespace
}  // namespace goodput
