#include "sim/simulator.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "core/data_dir.h"
#include "measure/run.h"
#include "sim/setup.h"
#include "support/temp_file.h"

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

// 2000-token system prompt shared by every request, 100 tokens of their own:
// with prefix caching each request after the first prefills ~100 tokens
// instead of ~2100, so its TTFT falls by far more than half.
TEST(Simulator, SharedPrefixCutsTtftWithPrefixCaching) {
  auto w = ParseWorkload("requests: 50\nclasses:\n  - name: rag\n    prefix: 2000\n    prompt: fixed:100\n"
                         "    output: fixed:10\n",
                         "w.yaml", ".");
  ASSERT_TRUE(w.ok()) << w.status().message();
  auto setup = SetupCatalogSimulation("llama-3.1-8b", "h100-sxm", PlanOptions{});
  ASSERT_TRUE(setup.ok()) << setup.status().message();
  const ArrivalSpec slow{ArrivalKind::kPoisson, 0, 2, 1};
  const auto mean_ttft = [&](bool cache, int64_t* hits) {
    SimOptions o = setup->options;
    o.prefix_caching = cache;
    auto run = Simulate(*w, slow, o, *setup->cost);
    EXPECT_TRUE(run.ok()) << run.status().message();
    double sum = 0;
    for (const auto& r : run->records) sum += *r.t_first - r.t_arrival;
    *hits = run->prefix_hit_tokens;
    return sum / static_cast<double>(run->records.size());
  };
  int64_t hits_on = 0, hits_off = 0;
  const double on = mean_ttft(true, &hits_on), off = mean_ttft(false, &hits_off);
  EXPECT_EQ(hits_off, 0);
  // Every request but the first (and one arriving during its prefill) finds
  // the prefix's whole blocks (2000 / 16 = 125), and nothing of its own.
  EXPECT_GE(hits_on, 48 * 125 * 16);
  EXPECT_LE(hits_on, 49 * 125 * 16);
  EXPECT_LT(on, off * 0.3) << "ttft with cache " << on << " s, without " << off << " s";
}

// A Mooncake trace replayed with its hash ids: by hand, request 2 finds
// request 1's blocks 1 and 2 (1,024 tokens), request 3 only block 1 (512: its
// second block is another), so the simulator's prefix cache hits 1,536 tokens,
// the figure `goodput workload from` reports as the trace's reuse.
TEST(Simulator, MooncakeTraceReplaysItsPrefixReuse) {
  const std::string trace = testing::WriteTempFile(
      "mooncake-replay.jsonl",
      "{\"timestamp\": 0, \"input_length\": 1024, \"output_length\": 2, \"hash_ids\": [1, 2]}\n"
      "{\"timestamp\": 1000, \"input_length\": 1500, \"output_length\": 2, \"hash_ids\": [1, 2, 3]}\n"
      "{\"timestamp\": 2000, \"input_length\": 1000, \"output_length\": 2, \"hash_ids\": [1, 9]}\n");
  auto w = ParseWorkload("requests: 3\narrival:\n  type: trace\n  file: " + trace +
                             "\nclasses:\n  - name: chat\n    prompt: fixed:1\n    output: fixed:1\n",
                         "w.yaml", ".");
  ASSERT_TRUE(w.ok()) << w.status().message();
  auto setup = SetupCatalogSimulation("llama-3.1-8b", "h100-sxm", PlanOptions{});
  ASSERT_TRUE(setup.ok()) << setup.status().message();
  SimOptions o = setup->options;
  o.prefix_caching = true;
  auto run = Simulate(*w, w->arrival, o, *setup->cost);
  ASSERT_TRUE(run.ok()) << run.status().message();
  ASSERT_EQ(run->records.size(), 3u);
  EXPECT_EQ(run->prefix_hit_tokens, 1536);
}

// Four data-parallel replicas of one GPU are scheduled as one engine with
// four times each replica's KV pool and limits, and say so; with whole
// experts per GPU they serve a load that fits one GPU's KV pool faster than
// one GPU, and at most four times as fast.
TEST(Simulator, DataParallelReplicasServeTogether) {
  PlanOptions po;
  po.expert_parallel = true;
  po.engine.scheduler.max_model_len = 8192;
  auto one = SetupCatalogSimulation("qwen3-30b-a3b", "h100-sxm", po, "none");
  po.data_parallel = 4;
  auto four = SetupCatalogSimulation("qwen3-30b-a3b", "h100-sxm", po, "none");
  ASSERT_TRUE(one.ok() && four.ok()) << four.status().message();
  EXPECT_EQ(four->options.num_blocks, 4 * four->plan.capacity.num_blocks);
  EXPECT_EQ(four->options.scheduler.max_num_seqs, 4 * four->plan.options.engine.scheduler.max_num_seqs);
  EXPECT_EQ(four->options.scheduler.max_num_batched_tokens,
            4 * four->plan.options.engine.scheduler.max_num_batched_tokens);
  ASSERT_EQ(four->startup_lines.size(), 1u);
  EXPECT_NE(four->startup_lines[0].find("data parallel: 4 replicas of 1 GPU (4 GPUs)"), std::string::npos);
  EXPECT_LT(four->plan.weights.bytes, one->plan.weights.bytes);  // a quarter of the experts
  auto w = ParseWorkload("requests: 512\nclasses:\n  - name: c\n    prompt: fixed:512\n    output: fixed:256\n",
                         "w.yaml", ".");
  ASSERT_TRUE(w.ok());
  const ArrivalSpec load{ArrivalKind::kClosedLoop, 64, 1, 1};
  auto a = Simulate(*w, load, one->options, *one->cost);
  auto b = Simulate(*w, load, four->options, *four->cost);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->preemptions, 0);
  const double speedup = a->simulated_seconds / b->simulated_seconds;
  EXPECT_GT(speedup, 1.5);
  EXPECT_LE(speedup, 4.0);
}

// A closed-loop client's next request that does not join the next step
// reaches the engine the loop's late follow-up time after that step's start
// (after the answer, when the engine is idle): by then the engine is in its
// next step, and the request waits for that step to end before its prefill.
TEST(Simulator, ClosedLoopRequestsArriveAfterTheClientsTurnaround) {
  auto w = ParseWorkload(
      "requests: 40\nclasses:\n  - name: chat\n    prompt: fixed:512\n    output: lognormal:32,0.5\n", "w.yaml", ".");
  ASSERT_TRUE(w.ok());
  auto setup = SetupCatalogSimulation("llama-3.1-8b", "h100-sxm", PlanOptions{});
  ASSERT_TRUE(setup.ok()) << setup.status().message();
  SimOptions o = setup->options;
  o.engine_loop.late_follow_up = LoopTime{0.002, 0, 0, {}};
  auto one = Simulate(*w, ArrivalSpec{ArrivalKind::kClosedLoop, 1, 1, 1}, o, *setup->cost);
  ASSERT_TRUE(one.ok());
  for (size_t i = 1; i < one->records.size(); ++i) {
    EXPECT_NEAR(one->records[i].t_arrival, *one->records[i - 1].t_last + 0.002, 1e-12);
  }
  const auto mean_ttft = [&](double turnaround) {
    SimOptions p = setup->options;
    p.engine_loop.late_follow_up = LoopTime{turnaround, 0, 0, {}};
    auto run = Simulate(*w, ArrivalSpec{ArrivalKind::kClosedLoop, 8, 1, 1}, p, *setup->cost);
    EXPECT_TRUE(run.ok());
    double sum = 0;
    for (const auto& r : run->records) sum += *r.t_first - r.t_arrival;
    return sum / static_cast<double>(run->records.size());
  };
  // With 8 clients of different output lengths the engine is rarely idle: an
  // instant turnaround lands on a step boundary, 1 us later waits for the
  // step that has just begun (a decode step of 8 is > 5 ms here).
  EXPECT_GT(mean_ttft(1e-6), mean_ttft(0) + 0.004);
}

// goodput serve hands a step's outputs over before its next step: a
// follow-up that joins arrives within that time and runs in the next step
// (its TTFT is at most the gap and its prefill step), a late one waits for
// that step to end. The steps lie apart by the loop's time, growing with the
// step's requests; the share of follow-ups that join is the loop's chance.
TEST(Simulator, FollowUpsJoinTheNextStepByTheLoopsChance) {
  auto w = ParseWorkload(
      "requests: 200\nclasses:\n  - name: chat\n    prompt: fixed:512\n    output: lognormal:32,0.5\n", "w.yaml", ".");
  ASSERT_TRUE(w.ok());
  auto setup = SetupCatalogSimulation("llama-3.1-8b", "h100-sxm", PlanOptions{});
  ASSERT_TRUE(setup.ok()) << setup.status().message();
  struct Loop {
    double ttft = 0, min_gap = 1, max_gap = 0;
    int follow_ups = 0, joined = 0;
  };
  const auto run = [&](double chance) {
    SimOptions o = setup->options;
    o.engine_loop.between_steps = LoopTime{0.0004, 0.0001, 0, {}};
    o.engine_loop.join = JoinChance{chance, 0, 0};
    o.engine_loop.late_follow_up = LoopTime{0.002, 0, 0, {}};
    Loop g;
    double last_end = -1;
    int last_requests = 0;
    o.step_observer = [&](const ObservedStep& step) {
      const double gap = step.start - last_end - 0.0001 * last_requests;
      // Only steps that follow at once: an idle engine waits for an arrival.
      if (last_end >= 0 && gap < 0.0004 + 1e-9)
        g.min_gap = std::min(g.min_gap, gap), g.max_gap = std::max(g.max_gap, gap);
      for (const ScheduledRequest& r : step.plan.requests) {
        if (!r.restarted || r.arrival_time == 0) continue;  // the first wave arrives at once
        ++g.follow_ups;
        g.joined += r.arrival_time > last_end && r.arrival_time <= step.start;
      }
      last_end = step.end;
      last_requests = static_cast<int>(step.plan.requests.size());
    };
    auto r = Simulate(*w, ArrivalSpec{ArrivalKind::kClosedLoop, 8, 1, 1}, o, *setup->cost);
    EXPECT_TRUE(r.ok()) << r.status().message();
    for (const auto& rec : r->records)
      g.ttft += (*rec.t_first - rec.t_arrival) / static_cast<double>(r->records.size());
    return g;
  };
  const Loop joins = run(1), waits = run(0), half = run(0.5);
  EXPECT_NEAR(joins.min_gap, 0.0004, 1e-9);
  EXPECT_NEAR(joins.max_gap, 0.0004, 1e-9);
  EXPECT_EQ(waits.joined, 0);
  EXPECT_GT(joins.joined, joins.follow_ups * 0.9) << "all but follow-ups of a step that left the engine idle";
  EXPECT_NEAR(half.joined, half.follow_ups * 0.5 * joins.joined / joins.follow_ups, half.follow_ups * 0.1);
  // Joining saves the rest of a step under way: a decode step of 8 on an H100
  // is > 5 ms here; the waiting follow-up's TTFT holds a whole extra step.
  EXPECT_GT(waits.ttft, joins.ttft + 0.004) << waits.ttft << " vs " << joins.ttft;
}

// The front end's latency (vLLM's API server) delays every request on its
// way to the scheduler alongside the others. Requests spaced far apart each
// find an idle engine, so each first token comes exactly that much later and
// the decode steps do not change; in a closed loop of one client each
// request takes that much longer, so the run does too.
TEST(Simulator, FrontEndLatencyDelaysEveryFirstTokenAlike) {
  auto w = ParseWorkload("requests: 20\nclasses:\n  - name: chat\n    prompt: fixed:200\n    output: fixed:50\n",
                         "w.yaml", ".");
  ASSERT_TRUE(w.ok());
  auto setup = SetupCatalogSimulation("llama-3.1-8b", "h100-sxm", PlanOptions{});
  ASSERT_TRUE(setup.ok()) << setup.status().message();
  const auto run = [&](double latency, const ArrivalSpec& load) {
    CostFactors f = setup->cost->factors();
    f.frontend_latency_s = latency;
    const CostModel cost(setup->cost->model(), f);
    auto r = Simulate(*w, load, setup->options, cost);
    EXPECT_TRUE(r.ok()) << r.status().message();
    return std::move(*r);
  };
  const ArrivalSpec apart{ArrivalKind::kPoisson, 0, 0.5, 1};  // one request every 2 s on average
  const SimRun now = run(0, apart), later = run(0.05, apart);
  ASSERT_EQ(now.records.size(), later.records.size());
  for (size_t i = 0; i < now.records.size(); ++i) {
    const RequestRecord &a = now.records[i], &b = later.records[i];
    ASSERT_DOUBLE_EQ(a.t_arrival, b.t_arrival) << "the client sends at the same time";
    EXPECT_NEAR(*b.t_first - b.t_arrival, *a.t_first - a.t_arrival + 0.05, 1e-9) << i;
    EXPECT_NEAR(*b.t_last - *b.t_first, *a.t_last - *a.t_first, 1e-9) << i;
  }
  const ArrivalSpec one_client{ArrivalKind::kClosedLoop, 1, 1, 1};
  const SimRun closed = run(0, one_client), slowed = run(0.05, one_client);
  EXPECT_NEAR(slowed.simulated_seconds - closed.simulated_seconds, 20 * 0.05, 1e-3);
}

// a + a^2 + ... + a^k = accepted, solved for a: one draft a step accepts
// `accepted` itself; eight drafts at 2.4 accepted (vLLM's 30%) need a
// per-position chance near 0.72 (0.72 (1 - 0.72^8) / 0.28 = 2.385).
TEST(PerPositionAcceptance, SolvesTheGeometricSum) {
  EXPECT_NEAR(*PerPositionAcceptance(1, 0.4), 0.4, 1e-9);
  const double a = *PerPositionAcceptance(8, 2.4);
  double sum = 0, term = 1;
  for (int i = 0; i < 8; ++i) sum += (term *= a);
  EXPECT_NEAR(sum, 2.4, 1e-9);
  EXPECT_NEAR(a, 0.7215, 0.001);
  EXPECT_NEAR(*PerPositionAcceptance(4, 4), 1, 1e-9);
  EXPECT_NEAR(*PerPositionAcceptance(4, 0), 0, 1e-9);
  EXPECT_FALSE(PerPositionAcceptance(0, 0.5).ok());
  EXPECT_FALSE(PerPositionAcceptance(4, 4.5).ok());
  EXPECT_FALSE(PerPositionAcceptance(4, -0.1).ok());
}

TEST(JoinChance, FallsPerDoublingAndRankWithinZeroAndOne) {
  const JoinChance c{0.8, -0.1, -0.2};
  EXPECT_DOUBLE_EQ(c.At(1), 0.8);
  EXPECT_DOUBLE_EQ(c.At(8), 0.5);
  EXPECT_DOUBLE_EQ(c.At(8, 1), 0.3);
  EXPECT_DOUBLE_EQ(c.At(0), 0.8) << "no requests counts as one";
  EXPECT_DOUBLE_EQ(c.At(64, 2), 0.0) << "held at 0";
  EXPECT_DOUBLE_EQ((JoinChance{1.5, 0, 0}.At(4)), 1.0) << "held at 1";
}

TEST(LoopTime, DrawsTheMedianTimesTheSpreadAtAQuantile) {
  const LoopTime t{0.001, 0.0001, 0.0005, {0.5, 1.0, 3.0}};  // at quantiles 1/6, 1/2, 5/6
  EXPECT_DOUBLE_EQ(t.Median(10), 0.002);
  EXPECT_DOUBLE_EQ(t.Draw(10, 0.5, 2), 0.003) << "two follow-ups before it: 1 ms later";
  EXPECT_DOUBLE_EQ(t.Draw(10, 0.5), 0.002);
  EXPECT_DOUBLE_EQ(t.Draw(10, 0.0), 0.001) << "below the first quantile: held flat";
  EXPECT_DOUBLE_EQ(t.Draw(10, 1.0), 0.006) << "above the last: held flat";
  EXPECT_NEAR(t.Draw(10, 2.0 / 3.0), 0.002 * 2.0, 1e-12) << "halfway from 1/2 to 5/6: from 1.0 to 3.0";
  const LoopTime fixed{0.003, 0, 0, {}};
  EXPECT_DOUBLE_EQ(fixed.Draw(5, 0.9), 0.003) << "no spread: the median";
}

// Two 3000-token prompts fill a 400-block pool (188 blocks each); as the first
// grows by its outputs the second is preempted. vLLM frees the victim's blocks
// last-first, so the few the first request takes are the victim's tail: on
// readmission the victim finds the rest of its prompt in the cache and
// recomputes only the lost tail, not 3000 tokens.
TEST(Simulator, PreemptedRequestResumesFromItsCachedBlocks) {
  auto w = ParseWorkload("requests: 2\narrival:\n  type: batch\nclasses:\n  - name: long\n    prompt: fixed:3000\n"
                         "    output: fixed:400\n",
                         "w.yaml", ".");
  ASSERT_TRUE(w.ok()) << w.status().message();
  auto setup = SetupCatalogSimulation("llama-3.1-8b", "h100-sxm", PlanOptions{});
  ASSERT_TRUE(setup.ok()) << setup.status().message();
  struct Outcome {
    int64_t preemptions, hits;
    double last_finish;
  };
  const auto run = [&](bool cache) {
    SimOptions o = setup->options;
    o.num_blocks = 400;
    o.prefix_caching = cache;
    auto r = Simulate(*w, ArrivalSpec{ArrivalKind::kBatch, 1, 1, 1}, o, *setup->cost);
    EXPECT_TRUE(r.ok()) << r.status().message();
    double last = 0;
    for (const auto& rec : r->records) last = std::max(last, *rec.t_last);
    return Outcome{r->preemptions, r->prefix_hit_tokens, last};
  };
  const Outcome on = run(true), off = run(false);
  EXPECT_GE(on.preemptions, 1);
  EXPECT_GE(off.preemptions, 1);
  EXPECT_EQ(off.hits, 0);
  // The first readmission alone finds the victim's 187 full prompt blocks
  // less those the first request took while growing from 188 to at most 213
  // blocks (25): more than 150 blocks.
  EXPECT_GE(on.hits, 150 * 16);
  EXPECT_LT(on.last_finish, off.last_finish);
}

// A closed-loop client with a think time sends its next request that long
// after the engine loop's follow-up (1 ms after an idle engine's last step).
TEST(Simulator, ClosedLoopClientsThinkBeforeTheirNextRequest) {
  auto w = ParseWorkload(
      "requests: 6\narrival: {type: closed, think: 1s}\nclasses:\n  - name: chat\n    prompt: fixed:100\n"
      "    output: fixed:5\n",
      "w.yaml", ".");
  ASSERT_TRUE(w.ok()) << w.status().message();
  auto setup = SetupCatalogSimulation("llama-3.1-8b", "h100-sxm", PlanOptions{});
  ASSERT_TRUE(setup.ok()) << setup.status().message();
  auto run = Simulate(*w, ArrivalSpec{ArrivalKind::kClosedLoop, 1, 1, 1}, setup->options, *setup->cost);
  ASSERT_TRUE(run.ok()) << run.status().message();
  ASSERT_EQ(run->records.size(), 6u);
  for (size_t i = 1; i < run->records.size(); ++i) {
    EXPECT_NEAR(run->records[i].t_arrival - *run->records[i - 1].t_last, 1.001, 1e-9) << i;
  }
}

}  // namespace
}  // namespace goodput
