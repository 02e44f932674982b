#include "sim_vs_serve_harness.h"

#include <gtest/gtest.h>

namespace goodput {
namespace {

// A point with the five figures a comparison judges, and intervals that
// hold nothing.
PointResult Figures(double ttft_p50, double ttft_p99, double tpot_p50, double tpot_p99, double throughput) {
  PointResult p;
  p.ttft.p50 = ttft_p50, p.ttft.p99 = ttft_p99, p.tpot.p50 = tpot_p50, p.tpot.p99 = tpot_p99;
  p.throughput = throughput;
  p.ttft.p50_interval = p.ttft.p99_interval = p.tpot.p50_interval = p.tpot.p99_interval = {0, 0};
  return p;
}

TEST(ScoreFigures, HoldsP50sTo10PercentP99sTo15AndThroughputTo5) {
  const PointResult measured = Figures(0.100, 0.400, 0.020, 0.050, 100);
  FigureScore s;
  ScoreFigures(Figures(0.109, 0.459, 0.0181, 0.0426, 104.9), measured, s);  // every figure just inside
  EXPECT_EQ(s.met, 5);
  EXPECT_EQ(s.total, 5);
  FigureScore t;
  ScoreFigures(Figures(0.111, 0.461, 0.0179, 0.0424, 105.1), measured, t);  // every figure just outside
  EXPECT_EQ(t.met, 0);
  EXPECT_EQ(t.total, 5);
  EXPECT_EQ(t.percentile_misses, 4) << "throughput is not a percentile";
}

TEST(ScoreFigures, AMissingFigureMissesAndAMissInsideTheIntervalIsUnresolved) {
  PointResult measured = Figures(0.100, 0.400, 0.020, 0.050, 100);
  measured.ttft.p99_interval = {0.300, 0.600};  // a p99 from few requests
  PointResult predicted = Figures(0.100, 0.300, 0.020, kNoValue, 100);
  FigureScore s;
  ScoreFigures(predicted, measured, s);
  EXPECT_EQ(s.met, 3);
  EXPECT_EQ(s.percentile_misses, 2);
  EXPECT_EQ(s.unresolved, 1) << "0.300 is 25% low but inside the measured p99's interval";
}

TEST(ScoreRepetitions, EachRepetitionIsPredictedByEveryOtherOne) {
  Comparison c;
  Comparison::Row row;
  const PointResult a = Figures(0.100, 0.400, 0.020, 0.050, 100);
  const PointResult b = Figures(0.130, 0.400, 0.020, 0.050, 100);  // TTFT p50 30% above a's
  row.serve_runs = {a, b};
  row.sim_runs = {b, a};
  c.rows = {row, row};
  // Serve: b predicts a (4 of 5) and a predicts b (4 of 5), for each of two loads.
  const FigureScore serve = ScoreRepetitions(c, false);
  EXPECT_EQ(serve.total, 20);
  EXPECT_EQ(serve.met, 16);
  // The simulator's repetition 2 (a) predicts serve's 1 (a), its 1 (b) serve's 2 (b).
  const FigureScore sim = ScoreRepetitions(c, true);
  EXPECT_EQ(sim.total, 20);
  EXPECT_EQ(sim.met, 20);
  Comparison single;
  single.rows = {Comparison::Row{}};
  single.rows[0].serve_runs = {a};
  single.rows[0].sim_runs = {a};
  EXPECT_EQ(ScoreRepetitions(single, false).total, 0) << "one repetition has no other to predict it";
}

TEST(ScoreSimulator, JudgesTheSimulatorsPooledFiguresAgainstServes) {
  Comparison c;
  Comparison::Row row;
  row.serve = Figures(0.100, 0.400, 0.020, 0.050, 100);
  row.sim = Figures(0.100, 0.400, 0.020, 0.050, 94);  // throughput 6% low
  c.rows = {row};
  const FigureScore s = ScoreSimulator(c);
  EXPECT_EQ(s.met, 4);
  EXPECT_EQ(s.total, 5);
  EXPECT_EQ(ScoreSimulator(c, SimulatorFit::kOwnSteps).total, 0) << "no row was fitted to its own steps";
  EXPECT_EQ(ScoreSimulator(c, SimulatorFit::kEveryStep).total, 0) << "nor to every step";
  c.rows[0].sim_in_sample = Figures(0.100, 0.400, 0.020, 0.050, 99);  // throughput 1% low
  const FigureScore own = ScoreSimulator(c, SimulatorFit::kOwnSteps);
  EXPECT_EQ(own.met, 5);
  EXPECT_EQ(own.total, 5);
  c.rows[0].sim_every_step = Figures(0.112, 0.400, 0.020, 0.050, 100);  // TTFT p50 12% high
  const FigureScore every = ScoreSimulator(c, SimulatorFit::kEveryStep);
  EXPECT_EQ(every.met, 4);
  EXPECT_EQ(every.percentile_misses, 1);
  EXPECT_EQ(ScoreSimulator(c).met, 4) << "the held-out score still judges Row::sim";
  const std::string table = FormatComparison(c);
  EXPECT_NE(table.find("fitted to its own steps"), std::string::npos) << table;
  EXPECT_NE(table.find("  +0% +0% +0% +0% -1%\n"), std::string::npos) << table;
}

TEST(ScoreRerun, JudgesGoodputServesRerunAgainstItsFirstRun) {
  Comparison c;
  Comparison::Row row;
  row.serve = row.sim = Figures(0.100, 0.400, 0.020, 0.050, 100);
  c.rows = {row, row};
  EXPECT_EQ(ScoreRerun(c).total, 0) << "no row was rerun";
  c.rows[0].serve_rerun = Figures(0.100, 0.480, 0.020, 0.050, 103);  // TTFT p99 20% high, throughput 3% high
  const FigureScore s = ScoreRerun(c);
  EXPECT_EQ(s.total, 5) << "only the rerun row counts";
  EXPECT_EQ(s.met, 4);
  EXPECT_EQ(s.percentile_misses, 1);
  EXPECT_EQ(ScoreSimulator(c).met, 10) << "the simulator is still judged on Row::sim";
  const std::string table = FormatComparison(c);
  EXPECT_NE(table.find("serve's rerun: err"), std::string::npos) << table;
  EXPECT_NE(table.find("  +0% +20% +0% +0% +3%\n"), std::string::npos) << table;
}

// A p99 over fewer requests than bound it (368 at 95%) is flagged by load.
TEST(FormatComparison, NamesTheLoadsWhoseP99sAreOpenAbove) {
  Comparison c;
  for (auto [label, requests] : {std::pair{"2", 372}, {"4", 102}, {"8", 38}}) {
    Comparison::Row row;
    row.serve = row.sim = Figures(0.100, 0.400, 0.020, 0.050, 100);
    row.serve.label = row.sim.label = label;
    row.serve.ttft.count = requests;
    c.rows.push_back(row);
  }
  const std::string s = FormatComparison(c);
  EXPECT_NE(s.find("p99s of load 4, 8: goodput serve measured 102 requests or fewer, under the 368"), std::string::npos)
      << s;
  c.rows.erase(c.rows.begin() + 1, c.rows.end());
  EXPECT_EQ(FormatComparison(c).find("p99s of load"), std::string::npos);
}

// When the two capacities differ, the comparison says why each side's next
// load did not hold (here: a p90 verdict short of the 35 requests it needs).
TEST(FormatComparison, SaysWhyTheCapacitiesDiffer) {
  Comparison c;
  c.workload = "long-cpu";
  c.serve_capacity = std::nullopt;
  c.sim_capacity = "4";
  c.capacity_steps_apart = 3;
  c.serve_capacity_why =
      "capacity: none\n  at concurrency 1: interactive undecided: attainment 100% of 34 measured requests\n";
  c.sim_capacity_why = "capacity: concurrency 4 (17 tok/s, goodput 0.30 req/s)\n";
  const std::string differ = FormatComparison(c);
  EXPECT_NE(differ.find("goodput serve's capacity: none\n  at concurrency 1: interactive undecided"), std::string::npos)
      << differ;
  EXPECT_NE(differ.find("the simulator's capacity: concurrency 4"), std::string::npos) << differ;
  c.serve_capacity = "4";
  EXPECT_EQ(FormatComparison(c).find("goodput serve's capacity"), std::string::npos);
  // A failed request is named with its row.
  Comparison::Row row;
  row.serve.label = "1";
  row.serve.top_error = "HTTP 400: prompt too long (x1)";
  row.sim.label = "1";
  c.rows.push_back(row);
  const std::string failed = FormatComparison(c);
  EXPECT_NE(failed.find("load 1: goodput serve failed HTTP 400: prompt too long (x1)"), std::string::npos) << failed;
  EXPECT_EQ(failed.find("the simulator failed"), std::string::npos) << failed;
}

// Hit rates are judged in points of the prompt tokens looked up, and shown
// where there is something to compare.
TEST(ScoreHitRates, HoldsEachLoadsHitRateToFivePoints) {
  Comparison c;
  const auto row = [&](const char* label, double serve_hits, std::optional<double> sim_hits) {
    Comparison::Row r;
    r.serve = r.sim = Figures(0.100, 0.400, 0.020, 0.050, 100);
    r.serve.label = r.sim.label = label;
    r.serve.prefix_cache = PrefixCacheCounts{1000, serve_hits};
    if (sim_hits) r.sim.prefix_cache = PrefixCacheCounts{1000, *sim_hits};
    c.rows.push_back(r);
  };
  row("2", 700, 749);                   // 70.0% vs 74.9%: inside
  row("4", 700, 751);                   // 75.1%: outside
  row("8", 0, std::nullopt);            // the simulator saw no prefix cache: a miss
  c.rows.push_back(Comparison::Row{});  // goodput serve saw none: not judged
  const FigureScore s = ScoreHitRates(c);
  EXPECT_EQ(s.total, 3);
  EXPECT_EQ(s.met, 1);
  const std::string table = FormatComparison(c);
  EXPECT_NE(table.find("     2  prefix-cache hit rate serve/sim 70.0%/74.9% (+4.9 points)\n"), std::string::npos)
      << table;
  EXPECT_EQ(table.find("     8  prefix-cache"), std::string::npos) << "nothing to compare: " << table;
  EXPECT_EQ(table.find("busiest"), std::string::npos) << "one instance: " << table;
  c.rows[0].serve.replicas = c.rows[0].sim.replicas = {ReplicaCounts{30, 10, {}}, ReplicaCounts{10, 10, {}}};
  EXPECT_NE(FormatComparison(c).find("busiest instance / mean serve/sim 1.50/1.50"), std::string::npos);
}

}  // namespace
}  // namespace goodput
