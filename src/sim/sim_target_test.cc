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

// The description names the card, the deployment and the flags as given.
TEST(SimTarget, DescribesTheDeployment) {
  auto setup = SetupCatalogSimulation("llama-3.1-8b", "h100", PlanOptions{});
  ASSERT_TRUE(setup.ok()) << setup.status().message();
  const std::string d = DescribeSimTarget(*setup, "h100", "--max-num-seqs 64");
  EXPECT_EQ(d.rfind("sim:h100 (llama-3.1-8b x1, bf16 weights, bf16 KV, ", 0), 0u) << d;
  EXPECT_NE(d.find("policy fcfs; --max-num-seqs 64)"), std::string::npos) << d;
  EXPECT_EQ(d.find("front end"), std::string::npos) << d;  // the GPU work alone has none
  PlanOptions dp;
  dp.data_parallel = 2;
  auto replicas = SetupCatalogSimulation("llama-3.1-8b", "h100", dp, "vllm");
  ASSERT_TRUE(replicas.ok()) << replicas.status().message();
  const std::string r = DescribeSimTarget(*replicas, "h100", "");
  EXPECT_NE(r.find("x1 per replica, 2 replicas"), std::string::npos) << r;
  EXPECT_NE(r.find("policy fcfs, front end 50.0 ms)"), std::string::npos) << r;
  PlanOptions v0;
  v0.engine.scheduler.prefill_first = true;  // as --prefill-first sets them
  v0.engine.scheduler.chunked_prefill = false;
  v0.engine.scheduler.num_scheduler_steps = 10;
  auto older = SetupCatalogSimulation("llama-3.1-8b", "h100", v0);
  ASSERT_TRUE(older.ok()) << older.status().message();
  const std::string o = DescribeSimTarget(*older, "h100", "");
  EXPECT_NE(o.find("policy fcfs, prefill first, 10-step runs, whole prompts)"), std::string::npos) << o;
  // SGLang's engine entry puts prompts first and chunks them.
  auto sglang = SetupCatalogSimulation("llama-3.1-8b", "h100", PlanOptions{}, "sglang");
  ASSERT_TRUE(sglang.ok()) << sglang.status().message();
  EXPECT_TRUE(sglang->options.scheduler.prefill_first && sglang->options.scheduler.chunked_prefill);
  const std::string g = DescribeSimTarget(*sglang, "h100", "");
  EXPECT_NE(g.find("policy fcfs, prefill first)"), std::string::npos) << g;
}

// SGLang's token budget is its own by the card's memory (16,384 on a B200, where vLLM's is 8,192),
// the replicas' together under DP attention; a budget the flags give stays.
TEST(SimSetup, SglangTakesItsOwnTokenBudgetUnlessGiven) {
  const auto budget = [](const std::string& engine, int dp, int64_t given) -> int64_t {
    PlanOptions o;
    o.data_parallel = dp;
    o.engine.scheduler.max_num_batched_tokens = given;
    auto setup = SetupCatalogSimulation("llama-3.1-8b", "b200", o, engine);
    EXPECT_TRUE(setup.ok()) << setup.status().message();
    return setup.ok() ? setup->options.scheduler.max_num_batched_tokens : -1;
  };
  EXPECT_EQ(budget("sglang", 1, 0), 16384);
  EXPECT_EQ(budget("vllm", 1, 0), 8192);
  EXPECT_EQ(budget("sglang", 4, 0), 16384);  // 4,096 a replica
  EXPECT_EQ(budget("vllm", 4, 0), 4 * 8192);
  EXPECT_EQ(budget("sglang", 1, 2048), 2048);
}

// A user's overrides replace only the factors given; a bad one names the flags.
TEST(SimSetup, CostOverridesReplaceOnlyWhatIsGiven) {
  auto setup = SetupCatalogSimulation("llama-3.1-8b", "h100", PlanOptions{});
  ASSERT_TRUE(setup.ok()) << setup.status().message();
  const CostFactors before = setup->cost->factors();
  CostOverrides o;
  o.per_sequence_s = 3e-5;
  o.async_scheduling = true;
  ASSERT_TRUE(ApplyCostOverrides(o, "--flags", *setup).ok());
  const CostFactors& after = setup->cost->factors();
  EXPECT_DOUBLE_EQ(after.per_sequence_s, 3e-5);
  EXPECT_TRUE(after.async_scheduling);
  EXPECT_DOUBLE_EQ(after.bandwidth_efficiency, before.bandwidth_efficiency);
  EXPECT_DOUBLE_EQ(after.step_overhead_s, before.step_overhead_s);
  EXPECT_DOUBLE_EQ(after.overlap, before.overlap);
  CostOverrides bad;
  bad.overlap = 1.5;
  const Status st = ApplyCostOverrides(bad, "--overlap", *setup);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("--overlap: overlap must be in [0, 1]"), std::string::npos) << st.message();
  EXPECT_DOUBLE_EQ(setup->cost->factors().overlap, before.overlap);  // left as it was
}

}  // namespace
}  // namespace goodput
