// The simulator's fleets: instances behind a router, prefill and decode on
// instances apart (each of its own size), and routing by prompt prefix.
#include "sim/simulator.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <memory>

#include "core/data_dir.h"
#include "core/definitions.h"
#include "core/stats.h"
#include "sim/setup.h"

namespace goodput {
namespace {

// A fleet of four instances at four times the rate is four engines at the
// single rate: each takes a quarter of the requests, the fleet serves four
// times the tokens, and one request's speed (TPOT p50) is the single
// engine's within 10% (the router's split is more even than a quarter of a
// Poisson stream, which only helps the tail).
TEST(Simulator, AFleetOfFourAtFourTimesTheRateIsFourEngines) {
  auto w = LoadWorkload(DataDir() + "/workloads/chat.yaml");
  ASSERT_TRUE(w.ok());
  w->requests = 4000;
  PlanOptions po;
  po.engine.scheduler.max_model_len = 32768;
  auto setup = SetupCatalogSimulation("llama-3.1-8b", "h100-sxm", po);
  ASSERT_TRUE(setup.ok()) << setup.status().message();
  const auto run = [&](int replicas, double rate, RouterPolicy router) {
    SimOptions o = setup->options;
    o.replicas = replicas;
    o.router = router;
    auto r = Simulate(*w, ArrivalSpec{ArrivalKind::kPoisson, 1, rate, 1}, o, *setup->cost);
    EXPECT_TRUE(r.ok()) << r.status().message();
    return *r;
  };
  const auto tpot_p50 = [](const SimRun& r) {
    std::vector<double> v;
    for (const auto& rec : r.records) {
      if (auto t = Tpot(rec)) v.push_back(*t);
    }
    return *Percentile(v, 50);
  };
  const SimRun one = run(1, 10, RouterPolicy::kRoundRobin);
  for (RouterPolicy router : {RouterPolicy::kRoundRobin, RouterPolicy::kLeastOutstanding, RouterPolicy::kLeastKv}) {
    const SimRun four = run(4, 40, router);
    ASSERT_EQ(four.replicas.size(), 4u);
    for (const ReplicaStats& r : four.replicas) EXPECT_NEAR(r.requests, 1000, 100) << RouterPolicyName(router);
    EXPECT_NEAR(tpot_p50(four) / tpot_p50(one), 1, 0.10) << RouterPolicyName(router);
    EXPECT_NEAR(four.simulated_seconds / one.simulated_seconds, 0.25, 0.03) << RouterPolicyName(router);
  }
}

// Disaggregated, one client at a time: the prompt is computed on the prefill
// instance, its 125 blocks (2,000 tokens of Llama-3.1-8B: 16 tokens x 32
// layers x 8 KV heads x 128 x 2 x 2 bytes = 2 MiB a block) cross a 50 GB/s
// link in 5.24 ms, and the decode instance computes only the last prompt
// token for the first output. So each first token comes exactly that
// transfer plus one 1-token step later than on one aggregated instance, and
// every answer is whole.
TEST(Simulator, DisaggregatedPrefillAddsTheTransferAndOneStep) {
  auto w = ParseWorkload("requests: 20\nclasses:\n  - name: chat\n    prompt: fixed:2000\n    output: fixed:50\n",
                         "w.yaml", ".");
  ASSERT_TRUE(w.ok()) << w.status().message();
  auto setup = SetupCatalogSimulation("llama-3.1-8b", "h100-sxm", PlanOptions{});
  ASSERT_TRUE(setup.ok()) << setup.status().message();
  ASSERT_EQ(setup->options.kv_block_bytes, 2 << 20);
  const ArrivalSpec one{ArrivalKind::kClosedLoop, 1, 1, 1};
  auto aggregated = Simulate(*w, one, setup->options, *setup->cost);
  SimOptions o = setup->options;
  o.prefill_replicas = 1;
  o.kv_link = KvLink{"given", 50e9, 0};
  auto split = Simulate(*w, one, o, *setup->cost);
  ASSERT_TRUE(aggregated.ok() && split.ok());
  CostModel::Step decode;
  setup->cost->Add(decode, 1999, 1, true);
  const double expected = 125 * double{2 << 20} / 50e9 + setup->cost->Seconds(decode);
  EXPECT_NEAR(expected, 0.00524 + setup->cost->Seconds(decode), 1e-5);
  for (size_t i = 0; i < 20; ++i) {
    const RequestRecord &a = aggregated->records[i], &b = split->records[i];
    ASSERT_TRUE(b.ok && b.t_first);
    EXPECT_EQ(b.n_out, 50);
    EXPECT_NEAR((*b.t_first - b.t_arrival) - (*a.t_first - a.t_arrival), expected, 1e-6) << i;
  }
  // Two clients: both prompts are prefilled in one step and leave over the
  // same link one after the other, so the second first token is a transfer later.
  auto two = Simulate(*w, ArrivalSpec{ArrivalKind::kClosedLoop, 2, 1, 1}, o, *setup->cost);
  ASSERT_TRUE(two.ok());
  ASSERT_EQ(two->records[0].t_sent, two->records[1].t_sent);
  EXPECT_GE(*two->records[1].t_first - *two->records[0].t_first, 125 * double{2 << 20} / 50e9 - 1e-9);
  // A pool of 200 blocks holds one prompt (126 blocks), and the prefill
  // instance keeps the first prompt's until its transfer (5.24 ms) is read:
  // the second prompt is computed only then, so the first tokens (each on
  // its own decode instance) are a transfer and a prefill step apart, where
  // freeing at once would leave them one prefill step apart.
  SimOptions held = o;
  held.num_blocks = 200;
  held.replicas = 2;
  auto tight = Simulate(*w, ArrivalSpec{ArrivalKind::kClosedLoop, 2, 1, 1}, held, *setup->cost);
  ASSERT_TRUE(tight.ok()) << tight.status().message();
  CostModel::Step prefill;
  setup->cost->Add(prefill, 0, 2000, true);
  const double transfer = 125 * double{2 << 20} / 50e9;
  EXPECT_NEAR(*tight->records[1].t_first - *tight->records[0].t_first, transfer + setup->cost->Seconds(prefill), 1e-6);
  ASSERT_EQ(split->replicas.size(), 2u);
  EXPECT_TRUE(split->replicas[0].prefill);
  EXPECT_FALSE(split->replicas[1].prefill);
  EXPECT_EQ(split->replicas[0].requests, 20);
  EXPECT_EQ(split->replicas[1].requests, 20);
}

// Prefill instances sized apart: one client's 2,000-token prompt is computed
// on a one-GPU prefill instance (its own cost model and pool), its KV moves to
// a two-GPU decode instance, which computes the last prompt token. A one-GPU
// block is 2 MiB, a two-GPU one 1 MiB per GPU: the transfer takes the larger
// side, 125 x 2 MiB over 50 GB/s. So each first token comes exactly the
// one-GPU prefill step, that transfer and the two-GPU decode step after its
// request, and the prefill instance's pool is the one-GPU plan's.
TEST(Simulator, PrefillPoolRunsItsOwnSizeAndTheTransferTakesTheLargerShare) {
  auto w = ParseWorkload("requests: 10\nclasses:\n  - name: chat\n    prompt: fixed:2000\n    output: fixed:20\n",
                         "w.yaml", ".");
  ASSERT_TRUE(w.ok()) << w.status().message();
  PlanOptions two;
  two.tensor_parallel = 2;
  auto decode = SetupCatalogSimulation("llama-3.1-8b", "h100-sxm", two);
  auto prefill = SetupCatalogSimulation("llama-3.1-8b", "h100-sxm", PlanOptions{});
  ASSERT_TRUE(decode.ok() && prefill.ok());
  ASSERT_EQ(decode->options.kv_block_bytes, 1 << 20);
  ASSERT_EQ(prefill->options.kv_block_bytes, 2 << 20);
  auto pool = std::make_shared<PrefillPool>();
  pool->scheduler = prefill->options.scheduler;
  pool->kv_groups = prefill->options.kv_groups;
  pool->num_blocks = prefill->options.num_blocks;
  pool->kv_block_bytes = prefill->options.kv_block_bytes;
  pool->cost = std::shared_ptr<const CostModel>(std::move(prefill->cost));
  SimOptions o = decode->options;
  o.prefill_replicas = 1;
  o.kv_link = KvLink{"given", 50e9, 0};
  o.prefill_pool = pool;
  auto split = Simulate(*w, ArrivalSpec{ArrivalKind::kClosedLoop, 1, 1, 1}, o, *decode->cost);
  ASSERT_TRUE(split.ok()) << split.status().message();
  CostModel::Step prompt, first;
  pool->cost->Add(prompt, 0, 2000, true);
  decode->cost->Add(first, 1999, 1, true);
  const double expected = pool->cost->Seconds(prompt) + 125 * double{2 << 20} / 50e9 + decode->cost->Seconds(first);
  EXPECT_GT(pool->cost->Seconds(prompt), 1.5 * decode->cost->Seconds(prompt));
  for (const RequestRecord& r : split->records) {
    ASSERT_TRUE(r.ok && r.t_first);
    EXPECT_EQ(r.n_out, 20);
    EXPECT_NEAR(*r.t_first - r.t_arrival, expected, 1e-6);
  }
  // A prefill pool of 120 blocks cannot hold the prompt's 126: every request is refused there.
  auto small = std::make_shared<PrefillPool>(*pool);
  small->num_blocks = 120;
  o.prefill_pool = small;
  auto refused = Simulate(*w, ArrivalSpec{ArrivalKind::kClosedLoop, 1, 1, 1}, o, *decode->cost);
  ASSERT_TRUE(refused.ok()) << refused.status().message();
  EXPECT_EQ(refused->rejected, 10);
}

// 401 system prompts of 2,000 tokens, about five requests each (200 tokens
// of their own; request i uses prompt i mod 401), on four instances of
// 420,624 KV tokens each. Routed by prefix, each instance holds about 100
// prompts (200,000 tokens, which fit): a prompt's first request misses and
// the other four find it, 4 x 2,000 of 5 x 2,200 tokens (73%). Round robin
// sends every prompt to every instance, which would need all 802,000 tokens:
// the LRU evicts each prompt before it comes back, and almost nothing is
// found (under 5%). By hand, not from a run.
TEST(Simulator, PrefixAffinityFindsThePromptsRoundRobinScatters) {
  auto w = ParseWorkload(
      "requests: 2000\nclasses:\n  - name: rag\n    prefix: {tokens: 2000, groups: 401}\n"
      "    prompt: fixed:200\n    output: fixed:10\n",
      "w.yaml", ".");
  ASSERT_TRUE(w.ok()) << w.status().message();
  auto setup = SetupCatalogSimulation("llama-3.1-8b", "h100-sxm", PlanOptions{});
  ASSERT_TRUE(setup.ok()) << setup.status().message();
  const auto hit_rate = [&](RouterPolicy router) {
    SimOptions o = setup->options;
    o.prefix_caching = true;
    o.replicas = 4;
    o.router = router;
    auto r = Simulate(*w, ArrivalSpec{ArrivalKind::kPoisson, 1, 20, 1}, o, *setup->cost);
    EXPECT_TRUE(r.ok()) << r.status().message();
    return static_cast<double>(r->prefix_hit_tokens) / static_cast<double>(r->prefix_queried_tokens);
  };
  const double affine = hit_rate(RouterPolicy::kPrefixAffinity), scattered = hit_rate(RouterPolicy::kRoundRobin);
  std::printf("prefix hit rate: prefix-affinity %.1f%%, round-robin %.1f%%\n", 100 * affine, 100 * scattered);
  EXPECT_NEAR(affine, 0.73, 0.05);
  EXPECT_LT(scattered, 0.05);
}

}  // namespace
}  // namespace goodput
