// The simulator calibrated from goodput serve's own steps against goodput
// serve over real HTTP: a short chat workload at three loads, side by side
// (the full comparison, with its targets and goodput serve's own rerun, is
// perf/sim_vs_serve, which prints figures). Each load is predicted from the
// steps goodput serve took at the other two. The latency bounds come from the
// run's own noise: the simulator's median must lie within what goodput serve's
// sample can tell apart (the 95% interval of its median), widened by the
// model's tolerance; a run that lands in a slow spell of a shared machine
// widens that interval with it. Beside them, factor bounds on the means and on
// throughput catch a simulator wrong by a factor: a cost model off by 2x, a
// missing wait for the running step, a pool of another size.
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "calibrate/engine_calibration.h"
#include "engine/step_log.h"
#include "ledger/ledger.h"
#include "validation/sim_vs_serve_harness.h"

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

// The simulator's median lies within goodput serve's 95% interval of its
// median, each side widened by the model's tolerance (35%), and its mean
// within a factor of 2 of goodput serve's.
void ExpectWithinTheSamplesInterval(const LatencyStats& sim, const LatencyStats& serve, const std::string& what) {
  constexpr double kTolerance = 1.35;
  std::printf("%s: serve p50 %.1f ms (95%% interval %.1f-%.1f), mean %.1f; sim p50 %.1f, mean %.1f\n", what.c_str(),
              1e3 * serve.p50, 1e3 * serve.p50_interval.lower, 1e3 * serve.p50_interval.upper, 1e3 * serve.mean,
              1e3 * sim.p50, 1e3 * sim.mean);
  EXPECT_GE(sim.p50, serve.p50_interval.lower / kTolerance) << what;
  EXPECT_LE(sim.p50, serve.p50_interval.upper * kTolerance) << what;
  EXPECT_TRUE(std::isfinite(serve.p50_interval.upper)) << what << ": enough requests to bound the median";
  EXPECT_NEAR(std::log(sim.mean / serve.mean), 0.0, std::log(2.0)) << what << ": means within a factor of 2";
}

TEST(SimVsServe, TheCalibratedSimulatorPredictsTheRealEngine) {
  server::ServeConfig config;
  config.model = "goodput-small";
  config.engine.cache.kv_cache_memory = int64_t{128} << 20;
  auto w = ParseWorkload(kWorkload, "chat-small", ".");
  ASSERT_TRUE(w.ok()) << w.status().message();
  MeasurementSpec spec;
  spec.workload = *w;
  // Two passes over the loads: a slow spell of a shared machine on one load's
  // only run (TPOT 16, 42 and 54 ms at 2, 4 and 8 clients in one make test
  // run; 19, 36 and 58 in a quieter one) made the fit to its steps predict 8
  // clients 46% slow; with two, each load's steps come from two stretches.
  spec.repeat = 2;
  for (int c : {2, 4, 8}) spec.loads.push_back(ArrivalSpec{ArrivalKind::kClosedLoop, c, 1, 1});
  auto held_out = CompareSimToServeHeldOut(GOODPUT_BINARY, {{config, spec}});
  ASSERT_TRUE(held_out.ok()) << held_out.status().message();
  std::printf("%s\n", FormatResiduals(held_out->all_steps).c_str());
  // goodput serve's loop around its steps is measured in its logs: three
  // closed loops run twice, their finishes followed by the clients' next requests.
  const EngineLoopFit& loop = held_out->all_steps.engine_loop;
  ASSERT_TRUE(loop.loop.measured);
  EXPECT_EQ(loop.closed_logs, 6);
  EXPECT_GT(loop.follow_ups, 50);
  EXPECT_GT(loop.gaps, 100);
  EXPECT_GT(loop.races, 20) << "follow-ups of steps the engine followed at once";
  EXPECT_GT(loop.joined, 0) << "some reach the engine before its next step";
  for (const LoopTime* t : {&loop.loop.between_steps, &loop.loop.late_follow_up}) {
    EXPECT_GT(t->Median(4), 0);
    EXPECT_LT(t->Median(4), 0.02) << "tenths of a millisecond to a few, on loopback";
  }
  ASSERT_EQ(held_out->cases.size(), 1u);
  const Comparison& cmp = held_out->cases.front();
  std::printf("%s\n", FormatComparison(cmp).c_str());
  ASSERT_EQ(cmp.rows.size(), 3u);
  for (const Comparison::Row& r : cmp.rows) {
    EXPECT_GT(r.fit_steps, 0) << "each load is fitted to the other loads' steps";
    EXPECT_LT(r.fit_steps, held_out->all_steps.measurements) << "and not to its own: " << r.serve.label;
    // Both repetitions pooled: the median of the pooled requests lies between the runs' own.
    ASSERT_EQ(r.serve_runs.size(), 2u);
    ASSERT_EQ(r.sim_runs.size(), 2u);
    const auto [low, high] = std::minmax(r.serve_runs[0].tpot.p50, r.serve_runs[1].tpot.p50);
    EXPECT_GE(r.serve.tpot.p50, low) << r.serve.label;
    EXPECT_LE(r.serve.tpot.p50, high) << r.serve.label;
    const auto ratio = [](double sim, double serve) { return serve > 0 ? sim / serve : NAN; };
    EXPECT_NEAR(ratio(r.sim.throughput, r.serve.throughput), 1.0, 0.30) << "throughput at " << r.serve.label;
    ASSERT_TRUE(r.sim_in_sample.has_value()) << "each load is also fitted to its own steps";
    EXPECT_NEAR(ratio(r.sim_in_sample->throughput, r.serve.throughput), 1.0, 0.30) << "in sample at " << r.serve.label;
    ASSERT_TRUE(r.sim_every_step.has_value()) << "and with the one fit to every load's steps";
    EXPECT_NEAR(ratio(r.sim_every_step->throughput, r.serve.throughput), 1.0, 0.30)
        << "every step at " << r.serve.label;
    // TTFT's median at 8 clients sits between two modes (a request that
    // arrives during a decode step waits ~30 ms for it, one that arrives
    // during another's prefill ~170 ms) and jumps between them from run to run
    // of goodput serve alone (213-413 ms over seven runs), its mean with it
    // (+37% against the simulator once on CI): the interval holds that.
    ExpectWithinTheSamplesInterval(r.sim.ttft, r.serve.ttft, "TTFT at " + r.serve.label);
    ExpectWithinTheSamplesInterval(r.sim.tpot, r.serve.tpot, "TPOT at " + r.serve.label);
    EXPECT_EQ(r.serve.preemptions, 0) << "goodput serve's /metrics counts preemptions";
  }
}

// Two goodput serve processes behind the client's prefix-affinity routing
// against the simulator's fleet of two behind the same router, calibrated
// from both processes' steps at the other loads: the capacity within one
// ladder step and every load's prefix-cache hit rate within 5 points (the
// targets), the figures within factor bounds (the two processes share this
// machine's cores, which the simulator's instances do not: perf/
// fleet_vs_serve prints the figures). About 100 s. Eight shared prompts hash
// evenly over the two (four went three to one, and which requests the load
// bound then sent to the other instance moved goodput serve's own hit rate
// 61-68% from run to run of the same 40 requests; eight: 67-68%). Up to 8
// clients: with 16 as well, a run that began beside a CPU hog failed the
// 5-point check (at 16 the load bound spills requests as the machine's timing
// has it). 80 requests a load: with 56, one request's 256-token prefix found
// or not moved a hit rate 1.4 points (runs came out 0-2.9 points apart), and
// one slow request left a p90 verdict undecided; with 80, two runs (one beside
// a CPU hog) matched to 0.0 points.
TEST(SimVsServe, AFleetOfTwoServersAgainstTheSimulatedFleet) {
  ComparisonCase fleet;
  fleet.config.model = "goodput-small";
  fleet.config.engine.cache.kv_cache_memory = int64_t{128} << 20;
  fleet.replicas = 2;
  fleet.router = RouterPolicy::kPrefixAffinity;
  auto w = ParseWorkload(R"(name: rag-small
seed: 4
requests: 80
warmup: 10%
cooldown: 10%
classes:
  - name: rag
    prefix: {tokens: 256, groups: 8}
    prompt: lognormal:64,0.5
    output: lognormal:16,0.4
    slo: ttft p90 <= 2s, tpot p90 <= 100ms
)",
                         "rag-small", ".");
  ASSERT_TRUE(w.ok()) << w.status().message();
  fleet.spec.workload = *w;
  for (int c : {2, 4, 8}) fleet.spec.loads.push_back(ArrivalSpec{ArrivalKind::kClosedLoop, c, 1, 1});
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("goodput-fleet-" + std::to_string(getpid()));
  const HeldOutOptions kept{dir.string(), false, (dir / "serve.db").string()};
  auto held_out = CompareSimToServeHeldOut(GOODPUT_BINARY, {fleet}, {}, kept);
  ASSERT_TRUE(held_out.ok()) << held_out.status().message();
  const Comparison& cmp = held_out->cases.front();
  std::printf("%s\n", FormatComparison(cmp).c_str());
  EXPECT_LE(cmp.capacity_steps_apart, 1) << "serve " << cmp.serve_capacity.value_or("none") << ", sim "
                                         << cmp.sim_capacity.value_or("none");
  const FigureScore hits = ScoreHitRates(cmp);
  EXPECT_EQ(hits.total, 3) << "goodput serve's /metrics give every load's hit rate";
  EXPECT_EQ(hits.met, hits.total) << "hit rates within 5 points";
  for (const Comparison::Row& r : cmp.rows) {
    ASSERT_EQ(r.serve.replicas.size(), 2u) << r.serve.label;
    ASSERT_EQ(r.sim.replicas.size(), 2u) << r.serve.label;
    ASSERT_TRUE(r.serve.prefix_cache.has_value()) << r.serve.label;
    EXPECT_GT(r.serve.prefix_cache->hit_rate(), 0.5)
        << "eight shared prompts, found after their first: " << r.serve.label;
    for (const ReplicaCounts& replica : r.serve.replicas) EXPECT_GT(replica.requests, 0) << r.serve.label;
    for (int j = 1; j <= 2; ++j) {
      const auto log = dir / fmt::format("case1-rag-small-load-{}-run-1-replica-{}.log", r.serve.label, j);
      auto steps = ReadStepLog(log.string());
      ASSERT_TRUE(steps.ok()) << steps.status().message();
      EXPECT_GT(steps->size(), 10u) << "each process logs its own steps: " << log;
    }
    EXPECT_GT(r.fit_steps, 0) << "fitted to the other loads' steps";
    // Factor bounds. Fitted to the load's own steps the simulator is held to
    // 2x: a cost model off by a factor, a missing wait or a pool of another
    // size shows there. Held out, 2.5x: at 2 clients the two processes seldom
    // step at once, and its steps ran faster than those of the loads the fit
    // came from (throughput -37% held out, -9% fitted to its own steps; in one
    // make test run beside another test, TPOT p50 +94% held out, +13% in sample).
    ASSERT_TRUE(r.sim_in_sample.has_value()) << r.serve.label;
    for (const auto& [sim, bound] : {std::pair{&r.sim, 2.5}, {&*r.sim_in_sample, 2.0}}) {
      EXPECT_NEAR(std::log(sim->throughput / r.serve.throughput), 0.0, std::log(bound)) << "at " << r.serve.label;
      EXPECT_NEAR(std::log(sim->tpot.mean / r.serve.tpot.mean), 0.0, std::log(bound)) << "at " << r.serve.label;
    }
  }
  auto ledger = Ledger::Open(kept.serve_ledger);
  ASSERT_TRUE(ledger.ok()) << ledger.status().message();
  const auto stored = (*ledger)->ListRuns();
  ASSERT_TRUE(stored.ok() && stored->size() == 1u);
  EXPECT_NE(stored->front().info.target.find(" x 2 (router prefix-affinity)"), std::string::npos)
      << stored->front().info.target;
  std::filesystem::remove_all(dir);
}

// A step log's steps without their times: what the engine computed, step by
// step, and which requests it finished.
std::vector<std::string> Shapes(const std::filesystem::path& log) {
  auto steps = ReadStepLog(log.string());
  EXPECT_TRUE(steps.ok()) << steps.status().message();
  std::vector<std::string> shapes;
  for (const LoggedStep& step : steps.ok() ? *steps : std::vector<LoggedStep>{}) {
    std::string shape;
    for (const StepRequest& r : step.requests) {
      shape += fmt::format(" {} {} {} {}", r.num_computed, r.num_new, r.samples, r.finished);
    }
    shapes.push_back(shape);
  }
  return shapes;
}

// The figures of a replay (sim_vs_serve --replay) are the comparison's own.
void ExpectSameFigures(const PointResult& replayed, const PointResult& original, const std::string& what) {
  EXPECT_EQ(replayed.label, original.label) << what;
  EXPECT_EQ(replayed.repeats, original.repeats) << what;
  for (auto [r, o] : {std::pair{replayed.ttft.p50, original.ttft.p50}, {replayed.ttft.p99, original.ttft.p99},
                      {replayed.tpot.p50, original.tpot.p50}, {replayed.tpot.p99, original.tpot.p99},
                      {replayed.throughput, original.throughput},
                      {replayed.ttft.p99_interval.upper, original.ttft.p99_interval.upper}}) {
    EXPECT_DOUBLE_EQ(r, o) << what << " at " << original.label;
  }
}

// Every load's first repetition runs before any load's second (passes), so a
// slow spell of the machine cannot fall on one load alone: each run's step
// log is written last as that run ends, so the logs' times give the order.
// The rerun runs the passes again afterwards, on the same requests. The runs
// are kept in a ledger beside the step logs, from which a replay gives the
// same comparison without goodput serve.
TEST(SimVsServe, RunsGoodputServeInPassesOverTheLoadsThenAgainAndKeepsThemForAReplay) {
  server::ServeConfig config;
  config.model = "goodput-small";
  config.engine.cache.kv_cache_memory = int64_t{128} << 20;
  auto w = ParseWorkload(R"(name: tiny-chat
seed: 5
requests: 6
classes:
  - name: interactive
    prompt: lognormal:48,0.3
    output: lognormal:8,0.3
)", "tiny-chat", ".");
  ASSERT_TRUE(w.ok()) << w.status().message();
  MeasurementSpec spec;
  spec.workload = *w;
  spec.repeat = 2;
  for (int c : {1, 2}) spec.loads.push_back(ArrivalSpec{ArrivalKind::kClosedLoop, c, 1, 1});
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("goodput-passes-" + std::to_string(getpid()));
  const HeldOutOptions kept{dir.string(), true, (dir / "serve.db").string()};
  auto held_out = CompareSimToServeHeldOut(GOODPUT_BINARY, {{config, spec}}, {}, kept);
  ASSERT_TRUE(held_out.ok()) << held_out.status().message();
  const auto log = [&](const char* load, const char* round, int run) {
    return dir / fmt::format("case1-tiny-chat-load-{}-{}-{}.log", load, round, run);
  };
  const auto ended = [&](const char* load, const char* round, int run) {
    return std::filesystem::last_write_time(log(load, round, run));
  };
  EXPECT_LT(ended("1", "run", 1), ended("2", "run", 1));
  EXPECT_LT(ended("2", "run", 1), ended("1", "run", 2)) << "load 1's second repetition waits for every load's first";
  EXPECT_LT(ended("1", "run", 2), ended("2", "run", 2));
  EXPECT_LT(ended("2", "run", 2), ended("1", "rerun", 1)) << "the rerun starts after the last pass";
  EXPECT_LT(ended("1", "rerun", 1), ended("2", "rerun", 1));
  EXPECT_LT(ended("2", "rerun", 1), ended("1", "rerun", 2));
  EXPECT_LT(ended("1", "rerun", 2), ended("2", "rerun", 2));
  // One client computes the same steps whenever it is given the same requests.
  EXPECT_EQ(Shapes(log("1", "rerun", 1)), Shapes(log("1", "run", 1))) << "the rerun draws repetition 1's requests";
  EXPECT_EQ(Shapes(log("1", "rerun", 2)), Shapes(log("1", "run", 2)));
  EXPECT_NE(Shapes(log("1", "run", 1)), Shapes(log("1", "run", 2))) << "repetitions draw requests of their own";
  for (const Comparison::Row& r : held_out->cases.front().rows) {
    EXPECT_EQ(r.serve_runs.size(), 2u) << "both repetitions pooled at " << r.serve.label;
    EXPECT_EQ(r.sim_runs.size(), 2u) << "and as many on the simulator at " << r.serve.label;
    EXPECT_EQ(r.serve.repeats, 2);
    ASSERT_TRUE(r.serve_rerun.has_value()) << r.serve.label;
    EXPECT_EQ(r.serve_rerun->repeats, 2);
    EXPECT_EQ(r.serve_rerun->e2e.count, r.serve.e2e.count) << "as many measured requests at " << r.serve.label;
  }
  // One ledger run per round, named for the case, with goodput serve's flags.
  auto ledger = Ledger::Open(kept.serve_ledger);
  ASSERT_TRUE(ledger.ok()) << ledger.status().message();
  const auto stored = (*ledger)->ListRuns();
  ASSERT_TRUE(stored.ok());
  ASSERT_EQ(stored->size(), 2u);
  EXPECT_EQ(stored->at(1).info.command, "sim_vs_serve: goodput serve, case 1 (tiny-chat), rerun");
  EXPECT_NE(stored->at(0).info.target.find("--kv-cache-memory 134217728"), std::string::npos)
      << stored->at(0).info.target;
  auto replay = ReplaySimToServeHeldOut({{config, spec}}, {}, kept);
  ASSERT_TRUE(replay.ok()) << replay.status().message();
  const Comparison &original = held_out->cases.front(), &again = replay->cases.front();
  ASSERT_EQ(again.rows.size(), original.rows.size());
  for (size_t i = 0; i < original.rows.size(); ++i) {
    const Comparison::Row &o = original.rows[i], &r = again.rows[i];
    ExpectSameFigures(r.serve, o.serve, "goodput serve");
    ExpectSameFigures(*r.serve_rerun, *o.serve_rerun, "goodput serve's rerun");
    ASSERT_EQ(r.serve_runs.size(), o.serve_runs.size());
    for (size_t k = 0; k < o.serve_runs.size(); ++k) {
      ExpectSameFigures(r.serve_runs[k], o.serve_runs[k], "a repetition");
    }
    ExpectSameFigures(r.sim, o.sim, "the simulator, fitted to the same logs");
  }
  EXPECT_EQ(FormatComparison(again), FormatComparison(original));
  // Kept runs of another case are refused, and so is a missing ledger.
  MeasurementSpec other = spec;
  other.workload.requests = 8;
  auto mismatch = ReplaySimToServeHeldOut({{config, other}}, {}, kept);
  ASSERT_FALSE(mismatch.ok());
  EXPECT_NE(mismatch.status().message().find("6 requests"), std::string::npos) << mismatch.status().message();
  auto missing = ReplaySimToServeHeldOut({{config, spec}}, {}, {dir.string(), true, (dir / "none.db").string()});
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("none.db"), std::string::npos) << missing.status().message();
  std::filesystem::remove_all(dir);
}

TEST(SimVsServe, RefusesCasesOfTwoModelsOrWithoutALoad) {
  server::ServeConfig small, tiny;
  small.model = "goodput-small";
  tiny.model = "goodput-tiny";
  MeasurementSpec spec;
  spec.loads.push_back(ArrivalSpec{ArrivalKind::kClosedLoop, 1, 1, 1});
  auto mixed = CompareSimToServeHeldOut(GOODPUT_BINARY, {{small, spec}, {tiny, spec}});
  ASSERT_FALSE(mixed.ok());
  EXPECT_NE(mixed.status().message().find("share one model"), std::string::npos) << mixed.status().message();
  auto none = CompareSimToServeHeldOut(GOODPUT_BINARY, {{small, MeasurementSpec{}}});
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.status().message().find("without a load"), std::string::npos) << none.status().message();
  EXPECT_FALSE(CompareSimToServeHeldOut(GOODPUT_BINARY, {}).ok());
}

}  // namespace
}  // namespace goodput
