#include "measure/measurement.h"

#include <gtest/gtest.h>

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
  s.workload.classes[0].slo = ParseSlo("interactive: ttft p99 <= 1s")->classes.at(0);
  for (int c : concurrencies) s.loads.push_back(ArrivalSpec{ArrivalKind::kClosedLoop, c, 1, 1});
  return s;
}

TargetFactory Scripted(double capacity, std::vector<Setting>* settings = nullptr) {
  return [=](const Setting& s) -> Result<std::unique_ptr<Target>> {
    if (settings) settings->push_back(s);
    return std::unique_ptr<Target>(std::make_unique<ScriptedTarget>(capacity));
  };
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
  EXPECT_TRUE(sweep.points[2].holds);
  EXPECT_FALSE(sweep.points[3].holds);
  EXPECT_EQ(sweep.points[0].repeats, 2);
  EXPECT_EQ(sweep.points[0].steps, 150);  // median of the repetitions' 100 and 200
  EXPECT_EQ((*r)[0].target, "scripted");
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
  spec.vary = *ParseVary("--max-num-seqs=4,16");
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
  EXPECT_EQ(settings[1].flag, "max-num-seqs");
  EXPECT_EQ(settings[1].value, "16");
  EXPECT_EQ((*r)[0].setting, "max-num-seqs=4");
  EXPECT_EQ(recorded, (std::vector<std::string>{"max-num-seqs=4@1x1", "max-num-seqs=4@8x1", "max-num-seqs=16@1x1",
                                                 "max-num-seqs=16@8x1"}));
  EXPECT_NE(FormatResults(*r, spec.workload, 1, 0.01).find("Settings ranked by goodput at capacity"), std::string::npos);
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
