#include "tune/tune.h"

#include <gtest/gtest.h>

namespace goodput {
namespace {

// A target that holds its SLO up to `capacity` clients: every first token
// 10 ms after its arrival within it, 5 s beyond.
class CapacityTarget final : public Target {
 public:
  explicit CapacityTarget(int capacity, int* runs = nullptr) : capacity_(capacity), runs_(runs) {}
  Result<MeasuredRun> Run(const Workload& w, const ArrivalSpec& load, int repetition) override {
    if (runs_) ++*runs_;
    MeasuredRun run;
    for (int64_t i = 0; i < w.requests; ++i) {
      RequestRecord r;
      r.request_class = "interactive";
      r.t_arrival = r.t_sent = 0.1 * static_cast<double>(i);
      r.t_first = r.t_arrival + (load.concurrency <= capacity_ ? 0.010 : 5.0);
      r.t_last = *r.t_first + 0.07;
      r.n_out = 8;
      run.records.push_back(r);
    }
    run.window = MeasurementWindow(w, run.records);
    return run;
  }
  std::string Describe() const override { return "capacity " + std::to_string(capacity_); }

 private:
  int capacity_;
  int* runs_;
};

// Capacity by setting: max-num-seqs (the baseline's is 4) plus `fp8_gain`
// with kv-cache-dtype=fp8, at most `ceiling`. kv-cache-dtype=fp4 is a value
// the engine refuses; max-num-seqs=32 with fp8 does not start.
struct Engine {
  int fp8_gain = 2, ceiling = 19;
  int builds = 0;
  Result<std::unique_ptr<Target>> operator()(const Setting& s) {
    ++builds;
    const std::string* seqs = s.Find("max-num-seqs");
    const std::string* kv = s.Find("kv-cache-dtype");
    if (kv && *kv == "fp4") return Status::InvalidArgument("unknown KV cache dtype 'fp4'");
    const bool fp8 = kv && *kv == "fp8";
    if (fp8 && seqs && *seqs == "32") return Status::FailedPrecondition("the KV pool does not fit");
    const int cap = std::min(ceiling, (seqs ? std::stoi(*seqs) : 4) + (fp8 ? fp8_gain : 0));
    return std::unique_ptr<Target>(std::make_unique<CapacityTarget>(cap));
  }
};

TuneSpec Spec(const std::string& space) {
  TuneSpec t;
  t.measurement.workload = FixedLengthWorkload(40, 16, 8, "interactive");
  t.measurement.workload.classes[0].slo = ParseSlo("interactive: ttft p50 <= 1s")->classes.at(0);
  t.measurement.loads = {ArrivalSpec{ArrivalKind::kClosedLoop, 1, 1, 1}};
  t.space = *ParseSearchSpace(space);
  t.full_resolution = t.target_resolution = 0;  // to adjacent clients
  return t;
}

std::string Label(const TuneResult& r, size_t measured) { return r.measured[measured].setting.Label(); }

TEST(Tune, OnTheSimulatorAloneTheSimulatorsBestIsTheAnswer) {
  Engine sim;
  TuneSides sides;
  sides.simulator = std::ref(sim);
  auto r = Tune(Spec("max-num-seqs=2..16, kv-cache-dtype=auto|fp8"), sides);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_FALSE(r->confirmed);
  ASSERT_TRUE(r->recommended.has_value());
  const Evaluation& best = r->search.evaluations[*r->recommended];
  EXPECT_EQ(best.setting.Label(), "max-num-seqs=16, kv-cache-dtype=fp8");
  EXPECT_EQ(*best.score.capacity, 18);
  EXPECT_EQ(r->top.size(), 3u);
  EXPECT_EQ(*r->baseline_simulated->score.capacity, 4);
  EXPECT_TRUE(r->measured.empty());
}

// The target disagrees with the simulator about fp8 (it costs 3 clients
// there): the measured ranking decides, and says the simulator's first was
// not the measured best. The baseline and the top 3 are measured: 4
// capacity searches on the target.
TEST(Tune, TheTargetsMeasurementsDecide) {
  Engine sim, real{.fp8_gain = -3};
  TuneSides sides;
  sides.simulator = std::ref(sim);
  sides.target = std::ref(real);
  std::vector<std::string> target_points;
  sides.on_point = [&](Side side, Fidelity, const Setting& s, const PointResult& p, const std::vector<MeasuredRun>&) {
    if (side == Side::kTarget) target_points.push_back(s.Label() + "@" + p.label);
    return Status::Ok();
  };
  auto r = Tune(Spec("max-num-seqs=2..16, kv-cache-dtype=auto|fp8"), sides);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->measured.size(), 4u);
  EXPECT_TRUE(r->measured[0].baseline);
  EXPECT_EQ(real.builds, 4);
  EXPECT_EQ(Label(*r, 1), "max-num-seqs=16, kv-cache-dtype=fp8");  // the simulator's order
  EXPECT_EQ(*r->measured[1].score.capacity, 13);
  ASSERT_TRUE(r->recommended.has_value());
  EXPECT_EQ(Label(*r, *r->recommended), "max-num-seqs=16, kv-cache-dtype=auto");
  EXPECT_EQ(*r->measured[*r->recommended].score.capacity, 16);
  EXPECT_FALSE(r->simulator_first_measured_best);
  // The confirmation started at the simulator's prediction (18 for the first).
  EXPECT_EQ(target_points[std::find_if(target_points.begin(), target_points.end(),
                                       [](const std::string& p) { return p.find("fp8") != std::string::npos; }) -
                          target_points.begin()],
            "max-num-seqs=16, kv-cache-dtype=fp8@18");
}

// fp8 is faster on both, but its answers differ: the recommendation is the
// best whose outputs agree, and the faster one is named beside it. Only the
// settings that change numerics (and the baseline, for reference) are asked.
TEST(Tune, ASettingWhoseOutputsDifferIsNotRecommended) {
  Engine sim, real;
  TuneSides sides;
  sides.simulator = std::ref(sim);
  sides.target = std::ref(real);
  std::vector<std::string> asked;
  sides.check_outputs = [&](const Measured& m, Target&) -> Result<std::optional<OutputComparison>> {
    asked.push_back(m.baseline ? "baseline" : m.setting.Label());
    if (m.baseline) return std::optional<OutputComparison>();
    OutputComparison c;
    c.differ = m.setting.Find("kv-cache-dtype") && *m.setting.Find("kv-cache-dtype") == "fp8";
    return std::optional(c);
  };
  auto r = Tune(Spec("max-num-seqs=2..16, kv-cache-dtype=auto|fp8"), sides);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(Label(*r, *r->recommended), "max-num-seqs=16, kv-cache-dtype=auto");
  ASSERT_TRUE(r->best_but_outputs_differ.has_value());
  EXPECT_EQ(Label(*r, *r->best_but_outputs_differ), "max-num-seqs=16, kv-cache-dtype=fp8");
  EXPECT_EQ(asked,
            (std::vector<std::string>{"baseline", "max-num-seqs=16, kv-cache-dtype=fp8",
                                      "max-num-seqs=16, kv-cache-dtype=auto", "max-num-seqs=8, kv-cache-dtype=fp8"}));
}

// Without a simulator of its own (goodput serve on this machine), the
// baseline is measured first and the simulator fitted to it; --recalibrate
// fits again to every run and re-ranks the search's best.
TEST(Tune, TheSimulatorCanBeFittedToTheBaselineAndRefittedOnce) {
  Engine real, fitted;
  TuneSides sides;
  sides.target = std::ref(real);
  sides.fit_before_search = true;
  std::vector<size_t> fits;
  sides.fit = [&](const std::vector<Measured>& measured) -> Result<TargetFactory> {
    fits.push_back(measured.size());
    return TargetFactory(std::ref(fitted));
  };
  TuneSpec spec = Spec("max-num-seqs=2..16, kv-cache-dtype=auto|fp8");
  spec.recalibrate = true;
  auto r = Tune(spec, sides);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(fits, (std::vector<size_t>{1, 4}));  // the baseline; the baseline and the top 3
  ASSERT_TRUE(r->refit.has_value());
  EXPECT_EQ(r->refit->evaluations.size(), 6u);  // the search's best 2k
  EXPECT_EQ(r->measured.size(), 4u);            // the refit's first was measured already
}

TEST(Tune, ValuesTheSimulatorRefusesEndTheTuningAndSettingsThatDoNotStartArePruned) {
  Engine sim;
  TuneSides sides;
  sides.simulator = std::ref(sim);
  auto bad = Tune(Spec("max-num-seqs=2..16, kv-cache-dtype=auto|fp4"), sides);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("--space kv-cache-dtype=fp4"), std::string::npos) << bad.status().message();
  auto r = Tune(Spec("max-num-seqs=2..32, kv-cache-dtype=auto|fp8"), sides);
  ASSERT_TRUE(r.ok()) << r.status().message();
  int pruned = 0;
  for (const Evaluation& e : r->search.evaluations) pruned += !e.runs();
  EXPECT_EQ(pruned, 1);  // max-num-seqs=32 with fp8
  auto two_loads = Spec("max-num-seqs=2..4");
  two_loads.measurement.loads.push_back(two_loads.measurement.loads[0]);
  EXPECT_NE(Tune(two_loads, sides).status().message().find("from one load"), std::string::npos);
}

}  // namespace
}  // namespace goodput
