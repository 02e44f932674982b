#include "measure/measurement.h"

#include <cmath>

#include <boost/json.hpp>
#include <gtest/gtest.h>

#include "measure/point_json.h"
#include "measure/point_report.h"

namespace goodput {
namespace {

// A target whose latency is known: every request's first token comes 10 ms
// after its arrival while the load is within `capacity`, 5 s after it beyond.
class ScriptedTarget final : public Target {
 public:
  explicit ScriptedTarget(double capacity, std::vector<ArrivalSpec>* seen = nullptr)
      : capacity_(capacity), seen_(seen) {}
  Result<MeasuredRun> Run(const Workload& w, const ArrivalSpec& load, int repetition) override {
    if (seen_) seen_->push_back(load);
    const double level = load.kind == ArrivalKind::kClosedLoop ? load.concurrency : load.rate;
    const double ttft = level <= capacity_ ? 0.010 : 5.0;
    MeasuredRun run;
    for (int64_t i = 0; i < w.requests; ++i) {
      RequestRecord r;
      r.request_class = "interactive";
      r.t_arrival = r.t_sent = 0.1 * static_cast<double>(i) + 0.001 * repetition;
      r.t_first = r.t_arrival + ttft;
      r.t_last = *r.t_first + 0.01 * 7;
      r.n_in = 16;
      r.n_out = 8;
      run.records.push_back(r);
    }
    run.window = MeasurementWindow(w, run.records);
    run.engine.steps = 100 * repetition;
    return run;
  }
  std::string Describe() const override { return "scripted"; }

 private:
  double capacity_;
  std::vector<ArrivalSpec>* seen_;
};

MeasurementSpec Spec(const std::vector<int>& concurrencies) {
  MeasurementSpec s;
  s.workload = FixedLengthWorkload(40, 16, 8, "interactive");
  // p50: four good requests already show it (a p99 needs 381: MinTrialsToShow).
  s.workload.classes[0].slo = ParseSlo("interactive: ttft p50 <= 1s")->classes.at(0);
  for (int c : concurrencies) s.loads.push_back(ArrivalSpec{ArrivalKind::kClosedLoop, c, 1, 1});
  return s;
}

TargetFactory Scripted(double capacity, std::vector<Setting>* settings = nullptr) {
  return [=](const Setting& s) -> Result<std::unique_ptr<Target>> {
    if (settings) settings->push_back(s);
    return std::unique_ptr<Target>(std::make_unique<ScriptedTarget>(capacity));
  };
}

// --rate keeps the workload's own arrival shape (a file's near-constant
// gamma stays near-constant at another rate) unless --burstiness names one;
// before, every --rate ladder was Poisson.
TEST(Ladder, RatesKeepTheWorkloadsArrivalShapeUnlessOneIsGiven) {
  Workload gamma;
  gamma.arrival = ArrivalSpec{ArrivalKind::kGamma, 1, 8, 1000};
  auto kept = Ladder("", "4,16", std::nullopt, gamma);
  ASSERT_TRUE(kept.ok()) << kept.status().message();
  ASSERT_EQ(kept->size(), 2u);
  EXPECT_EQ(kept->at(1).kind, ArrivalKind::kGamma);
  EXPECT_DOUBLE_EQ(kept->at(1).rate, 16);
  EXPECT_DOUBLE_EQ(kept->at(1).burstiness, 1000);
  auto poisson = Ladder("", "4", 1.0, gamma);
  ASSERT_TRUE(poisson.ok());
  EXPECT_EQ(poisson->front().kind, ArrivalKind::kPoisson);
  Workload closed;
  closed.arrival = ArrivalSpec{ArrivalKind::kClosedLoop, 8, 1, 1};
  EXPECT_EQ(Ladder("", "2", std::nullopt, closed)->front().kind, ArrivalKind::kPoisson);
  EXPECT_DOUBLE_EQ(Ladder("", "2", 0.5, closed)->front().burstiness, 0.5);
  auto bad = Ladder("", "2", 0.0, closed);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("--burstiness"), std::string::npos);
}

// --concurrency and --rate share the workload file's bounds (kMaxConcurrency,
// kMaxRate) and say which bound a value broke.
TEST(Ladder, ConcurrencyIsAWholeCountUpToTheWorkloadsBound) {
  const Workload w;
  auto ok = Ladder("1,100000", "", std::nullopt, w);
  ASSERT_TRUE(ok.ok()) << ok.status().message();
  EXPECT_EQ(ok->back().concurrency, kMaxConcurrency);
  auto many = Ladder("8,100001", "", std::nullopt, w);
  ASSERT_FALSE(many.ok());
  EXPECT_NE(many.status().message().find("--concurrency: 100001 clients; at most 100000"), std::string::npos)
      << many.status().message();
  auto fast = Ladder("", "4,2e6", std::nullopt, w);  // --rate shares the file's bound too
  ASSERT_FALSE(fast.ok());
  EXPECT_NE(fast.status().message().find("--rate: 2e+06 requests/s; 0.0001 to 1e+06"), std::string::npos)
      << fast.status().message();
  auto half = Ladder("2.5", "", std::nullopt, w);
  ASSERT_FALSE(half.ok());
  EXPECT_NE(half.status().message().find("'2.5' is not a whole number of clients"), std::string::npos)
      << half.status().message();
}

TEST(Measure, LadderCapacityIsTheLastLoadBeforeTheFirstFailure) {
  MeasurementSpec spec = Spec({1, 2, 4, 8, 16});
  spec.repeat = 2;
  auto r = Measure(spec, Scripted(4));
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->size(), 1u);
  const SweepResult& sweep = (*r)[0].sweep;
  ASSERT_EQ(sweep.points.size(), 5u);
  ASSERT_TRUE(sweep.capacity.has_value());
  EXPECT_EQ(sweep.points[*sweep.capacity].label, "4");
  EXPECT_FALSE(sweep.capped);
  EXPECT_TRUE(sweep.points[2].holds());
  EXPECT_FALSE(sweep.points[3].holds());
  EXPECT_EQ(sweep.points[0].repeats, 2);
  EXPECT_EQ(sweep.points[0].steps, 150);  // median of the repetitions' 100 and 200
  EXPECT_EQ((*r)[0].target, "scripted");
}

// mixed.yaml's sweep said "capacity: none" although loads 8, 32 and 128
// held: load 1 was undecided (too few requests there), not a failure.
TEST(Measure, AnUndecidedLoadIsPassedOverAFailingOneEndsTheLadder) {
  const auto ladder = [](std::vector<Verdict> verdicts) {
    std::vector<PointResult> points(verdicts.size());
    for (size_t i = 0; i < verdicts.size(); ++i) points[i].verdict = verdicts[i];
    return LadderCapacity(points);
  };
  using V = Verdict;
  EXPECT_EQ(ladder({V::kUndecided, V::kHolds, V::kHolds, V::kHolds}), 3u);
  EXPECT_EQ(ladder({V::kHolds, V::kUndecided, V::kHolds, V::kFails, V::kHolds}), 2u);
  EXPECT_EQ(ladder({V::kHolds, V::kHolds, V::kUndecided}), 1u);
  EXPECT_EQ(ladder({V::kFails, V::kHolds}), std::nullopt);
  EXPECT_EQ(ladder({V::kUndecided, V::kUndecided}), std::nullopt);
}

TEST(Measure, CapacitySearchBisectsToAdjacentLoads) {
  MeasurementSpec spec = Spec({1});
  spec.search_capacity = true;
  std::vector<ArrivalSpec> seen;
  auto r = Measure(spec, [&](const Setting&) -> Result<std::unique_ptr<Target>> {
    return std::unique_ptr<Target>(std::make_unique<ScriptedTarget>(5, &seen));
  });
  ASSERT_TRUE(r.ok()) << r.status().message();
  std::vector<int> order;
  for (const auto& l : seen) order.push_back(l.concurrency);
  EXPECT_EQ(order, (std::vector<int>{1, 2, 4, 8, 6, 5}));  // x2 up to the first failure, then bisection
  const SweepResult& sweep = (*r)[0].sweep;
  ASSERT_TRUE(sweep.capacity.has_value());
  EXPECT_EQ(sweep.points[*sweep.capacity].label, "5");
  for (size_t i = 1; i < sweep.points.size(); ++i) {
    EXPECT_LT(sweep.points[i - 1].load.concurrency, sweep.points[i].load.concurrency);  // sorted by load
  }
}

// A search started above the capacity (tune starts near the simulator's
// prediction) halves down to a load that holds and bisects from there; a
// resolution ends the bisection once the failure is within that share.
TEST(Measure, CapacitySearchFromAboveHalvesDownAndStopsAtItsResolution) {
  std::vector<int> order;
  const auto search = [&](double start, double resolution, double capacity) {
    order.clear();
    return SearchCapacity(
        [&](double load) -> Result<PointResult> {
          order.push_back(static_cast<int>(load));
          PointResult p;
          p.load = ArrivalSpec{ArrivalKind::kClosedLoop, static_cast<int>(load), 1, 1};
          p.verdict = load <= capacity ? Verdict::kHolds : Verdict::kFails;
          return p;
        },
        start, 1000, /*integer=*/true, resolution);
  };
  auto s = search(64, 0, 37);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(order, (std::vector<int>{64, 32, 48, 40, 36, 38, 37}));
  EXPECT_EQ(s->capacity->load.concurrency, 37);
  s = search(64, 0.1, 37);  // stops once the failure is within 10% of the pass: 38 is, of 36
  EXPECT_EQ(order, (std::vector<int>{64, 32, 48, 40, 36, 38}));
  EXPECT_EQ(s->capacity->load.concurrency, 36);
  s = search(8, 0, 0);  // nothing holds, down to one client
  EXPECT_EQ(order, (std::vector<int>{8, 4, 2, 1}));
  EXPECT_FALSE(s->capacity.has_value());
}

// Over a given ladder the capacity search walks up to the first load that
// does not hold, and runs no load beyond it.
TEST(Measure, CapacityOverALadderStopsAtTheFirstMiss) {
  MeasurementSpec spec = Spec({1, 2, 4, 8, 16});
  spec.search_capacity = true;
  std::vector<ArrivalSpec> seen;
  auto r = Measure(spec, [&](const Setting&) -> Result<std::unique_ptr<Target>> {
    return std::unique_ptr<Target>(std::make_unique<ScriptedTarget>(5, &seen));
  });
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(seen.size(), 4u);  // 1, 2, 4 hold; 8 does not; 16 never runs
  const SweepResult& sweep = (*r)[0].sweep;
  EXPECT_EQ(sweep.points[*sweep.capacity].label, "4");
}

TEST(Measure, CapacitySearchStopsAtHalfTheRequests) {
  MeasurementSpec spec = Spec({1});
  spec.search_capacity = true;
  auto r = Measure(spec, Scripted(1000));
  ASSERT_TRUE(r.ok());
  const SweepResult& sweep = (*r)[0].sweep;
  EXPECT_TRUE(sweep.capped);
  EXPECT_EQ(sweep.points.back().load.concurrency, 20);  // 40 requests per run
}

TEST(Measure, VaryBuildsOneTargetPerValueAndHooksSeeEveryPoint) {
  MeasurementSpec spec = Spec({1, 8});
  spec.vary = {*ParseVary("--max-num-seqs=4,16")};
  std::vector<Setting> settings;
  std::vector<std::string> recorded;
  MeasurementHooks hooks;
  hooks.on_point = [&](const Setting& s, const PointResult& p, const std::vector<MeasuredRun>& runs) {
    recorded.push_back(s.Label() + "@" + p.label + "x" + std::to_string(runs.size()));
    return Status::Ok();
  };
  auto r = Measure(spec, Scripted(4, &settings), hooks);
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(settings.size(), 2u);
  ASSERT_EQ(settings[1].flags.size(), 1u);
  EXPECT_EQ(settings[1].flags[0].name, "max-num-seqs");
  EXPECT_EQ(settings[1].flags[0].value, "16");
  EXPECT_EQ(settings[1].Args(), (std::vector<std::string>{"--max-num-seqs", "16"}));
  EXPECT_EQ((*r)[0].setting, "max-num-seqs=4");
  EXPECT_EQ(recorded, (std::vector<std::string>{"max-num-seqs=4@1x1", "max-num-seqs=4@8x1", "max-num-seqs=16@1x1",
                                                 "max-num-seqs=16@8x1"}));
  EXPECT_NE(FormatResults(*r, spec.workload, 1, 1, 0.01).find("Settings ranked by capacity, then goodput"),
            std::string::npos);
}

TEST(Measure, ErrorsEndTheMeasurement) {
  MeasurementSpec spec = Spec({1, 2});
  MeasurementHooks hooks;
  int points = 0;
  hooks.on_point = [&](const Setting&, const PointResult&, const std::vector<MeasuredRun>&) {
    return ++points == 1 ? Status::Ok() : Status::IoError("disk full");
  };
  auto r = Measure(spec, Scripted(4), hooks);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "disk full");
  MeasurementHooks stop;
  stop.stop = [] { return true; };
  EXPECT_EQ(Measure(spec, Scripted(4), stop).status().message(), "interrupted");
  auto no_target = Measure(spec, [](const Setting&) -> Result<std::unique_ptr<Target>> {
    return Status::FailedPrecondition("server exited at start-up");
  });
  EXPECT_EQ(no_target.status().message(), "server exited at start-up");
  spec.repeat = 0;
  EXPECT_FALSE(Measure(spec, Scripted(4)).ok());
  spec.repeat = 1;
  spec.loads.clear();
  EXPECT_FALSE(Measure(spec, Scripted(4)).ok());
}

// Verdicts from the Wilson interval: a clear miss fails, a clear pass holds,
// a near miss is undecided until enough requests say which.
TEST(JudgeAttainment, IntervalAgainstThePercentile) {
  EXPECT_EQ(JudgeAttainment(381, 381, 0.99), Verdict::kHolds);
  EXPECT_EQ(JudgeAttainment(380, 380, 0.99), Verdict::kUndecided);  // a p99 needs 381
  EXPECT_EQ(JudgeAttainment(23, 24, 0.99), Verdict::kUndecided);    // the demo's old 24-request points
  EXPECT_EQ(JudgeAttainment(90, 100, 0.99), Verdict::kFails);       // upper bound 94.5% < 99%
  EXPECT_EQ(JudgeAttainment(96, 100, 0.90), Verdict::kHolds);       // lower bound 90.2%
  EXPECT_EQ(JudgeAttainment(0, 0, 0.90), Verdict::kNoData);
  EXPECT_EQ(JudgeAttainment(5, 5, 1.0), Verdict::kHolds);           // p100: judged on the sample
  EXPECT_EQ(JudgeAttainment(4, 5, 1.0), Verdict::kFails);
}

// A point keeps running while undecided, up to the budget, and stops as soon
// as the verdict is known.
TEST(MeasurePoint, SamplesUntilDecidedOrTheBudgetEnds) {
  Workload w = FixedLengthWorkload(40, 16, 8, "interactive");
  w.classes[0].slo = ParseSlo("interactive: ttft p99 <= 1s")->classes.at(0);
  ArrivalSpec load{ArrivalKind::kClosedLoop, 2, 1, 1};
  ScriptedTarget good(100);  // every request good: 40 measured per run, a p99 needs 381
  auto held = MeasurePoint(good, w, load, Repetitions{2, 20});
  ASSERT_TRUE(held.ok());
  EXPECT_EQ(held->verdict, Verdict::kHolds);
  EXPECT_EQ(held->repeats, 10);  // 10 x 40 = 400 >= 381; 9 x 40 = 360 is short
  auto capped = MeasurePoint(good, w, load, Repetitions{2, 4});
  EXPECT_EQ(capped->verdict, Verdict::kUndecided);
  EXPECT_EQ(capped->repeats, 4);
  ScriptedTarget bad(0);  // every request late: fails at once
  auto failed = MeasurePoint(bad, w, load, Repetitions{2, 20});
  EXPECT_EQ(failed->verdict, Verdict::kFails);
  EXPECT_EQ(failed->repeats, 2);
}

TEST(Measure, RefusesAConcurrencyThatLeavesNothingToMeasure) {
  MeasurementSpec spec = Spec({1, 21});  // 40 requests per run
  auto r = Measure(spec, Scripted(4));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("concurrency 21 needs at least 42 requests per run (it has 40)"),
            std::string::npos)
      << r.status().message();
  spec.loads = {ArrivalSpec{ArrivalKind::kClosedLoop, 20, 1, 1}};
  EXPECT_TRUE(Measure(spec, Scripted(4)).ok());
}

// A class with an SLO and no measured request is "no data", never 100%,
// and the point cannot hold.
TEST(Summarise, ClassWithoutRequestsIsNoData) {
  Workload w = FixedLengthWorkload(10, 1, 1, "interactive");
  RequestClass rare = w.classes[0];
  rare.name = "rare";
  w.classes.push_back(rare);
  w.classes[0].slo = ParseSlo("interactive: ttft p50 <= 1s")->classes.at(0);
  w.classes[1].slo = ParseSlo("rare: ttft p50 <= 1s")->classes.at(0);
  ScriptedTarget target(100);  // issues only "interactive" requests
  auto run = target.Run(w, ArrivalSpec{ArrivalKind::kClosedLoop, 1, 1, 1}, 1);
  const PointResult p = Summarise(w, ArrivalSpec{}, {*run});
  ASSERT_EQ(p.classes.size(), 2u);
  EXPECT_EQ(p.classes[1].class_name, "rare");
  EXPECT_EQ(p.classes[1].verdict, Verdict::kNoData);
  EXPECT_TRUE(std::isnan(p.classes[1].attainment));
  EXPECT_EQ(p.verdict, Verdict::kUndecided);
  EXPECT_NE(FormatPointTable({p}).find("no data"), std::string::npos);
}

// The capacity line names the class that stops the ladder, with its figures,
// and gives the classes without an SLO their own line.
TEST(FormatCapacity, NamesTheFailingClassAndTheOfflineWork) {
  PointResult ok, bad;
  ok.label = "8";
  ok.throughput = 100;
  bad.label = "12";
  bad.verdict = Verdict::kFails;
  ClassAttainment chat;
  chat.class_name = "chat";
  chat.has_slo = true;
  chat.required = 0.99;
  chat.total = 500;
  chat.good = 450;
  chat.attainment = 0.9;
  chat.interval = WilsonInterval(450, 500);
  chat.verdict = Verdict::kFails;
  ClassAttainment batch;
  batch.class_name = "batch";
  batch.offline = true;
  batch.throughput = 37;
  ok.classes = {chat, batch};
  ok.classes[0].verdict = Verdict::kHolds;
  bad.classes = {chat, batch};
  const std::string s = FormatCapacity({ok, bad}, 0, false);
  EXPECT_NE(s.find("capacity: concurrency 8"), std::string::npos) << s;
  EXPECT_NE(s.find("at concurrency 12: chat fails: attainment 90.0% [87.1,92.3] n=500 measured requests, needs 99%"),
            std::string::npos) << s;
  EXPECT_NE(s.find("classes without an SLO at concurrency 8: batch 37 tok/s"), std::string::npos) << s;
}

TEST(SettingGrid, EveryCombinationFirstFlagOutermost) {
  auto grid = SettingGrid({*ParseVary("a=1,2"), *ParseVary("b=x,y,z")});
  ASSERT_TRUE(grid.ok());
  std::vector<std::string> labels;
  for (const Setting& s : *grid) labels.push_back(s.Label());
  EXPECT_EQ(labels, (std::vector<std::string>{"a=1, b=x", "a=1, b=y", "a=1, b=z", "a=2, b=x", "a=2, b=y", "a=2, b=z"}));
  EXPECT_EQ((*grid)[4].Args(), (std::vector<std::string>{"--a", "2", "--b", "y"}));
  ASSERT_NE((*grid)[4].Find("b"), nullptr);
  EXPECT_EQ(*(*grid)[4].Find("b"), "y");
  EXPECT_EQ((*grid)[4].Find("c"), nullptr);
  auto none = SettingGrid({});
  ASSERT_TRUE(none.ok());
  ASSERT_EQ(none->size(), 1u);
  EXPECT_TRUE(none->front().empty());
  EXPECT_EQ(none->front().Label(), "");
  EXPECT_NE(SettingGrid({*ParseVary("a=1"), *ParseVary("a=2")}).status().message().find("a is varied twice"),
            std::string::npos);
}

TEST(ParseVary, NamesWhatIsWrong) {
  auto v = ParseVary("max-num-seqs=8,16,32");
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(v->flag, "max-num-seqs");
  EXPECT_EQ(v->values, (std::vector<std::string>{"8", "16", "32"}));
  EXPECT_NE(ParseVary("max-num-seqs").status().message().find("must look like FLAG=V1,V2"), std::string::npos);
  EXPECT_NE(ParseVary("=8").status().message().find("must look like FLAG=V1,V2"), std::string::npos);
  EXPECT_NE(ParseVary("max-num-seqs=8,,16").status().message().find("empty value"), std::string::npos);
}

// The first wave is known by order of admission: four clients' first
// requests go out microseconds apart, not at one timestamp, and all four are
// warm-up.
TEST(MeasurementWindow, ClosedLoopFirstWaveIsWarmUpByAdmission) {
  Workload w = FixedLengthWorkload(10, 1, 1);
  std::vector<RequestRecord> records(10);
  for (int i = 0; i < 10; ++i) {
    records[i].first_wave = i < 4;
    records[i].t_arrival = i < 4 ? 1e-6 * i : 1.0 * (i - 3);
  }
  const Window win = MeasurementWindow(w, records);
  EXPECT_GT(win.start, 3e-6);  // after the wave's last send
  EXPECT_LE(win.start, 1.0);   // the first later request is measured
  EXPECT_GT(win.end, 6.0);     // the last arrival is inside
  w.warmup.fraction = 0.5;
  EXPECT_EQ(MeasurementWindow(w, records).start, 2.0);  // the 6th of 10 sorted arrivals
}

}  // namespace
}  // namespace goodput
