// Summarise's figures and verdicts on records made by hand: a drained
// offline batch and SLOs judged window by window.
#include "measure/point.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include <boost/json.hpp>
#include <gtest/gtest.h>

#include "core/stats.h"
#include "measure/measurement.h"
#include "measure/point_json.h"
#include "measure/point_report.h"
#include "measure/run.h"

namespace goodput {
namespace {

// SummariseLatency orders only the ranks it reads; every figure equals the
// one a full sort gives (the plain reference), ties and all.
TEST(SummariseLatency, EqualsItsFiguresOverAFullSort) {
  std::vector<double> v;
  for (int i = 0; i < 20011; ++i) v.push_back(0.001 * static_cast<double>((i * 104729) % 613));
  std::vector<double> sorted = v;
  std::sort(sorted.begin(), sorted.end());
  const LatencyStats s = SummariseLatency(v);
  EXPECT_EQ(s.count, 20011);
  EXPECT_DOUBLE_EQ(s.p50, PercentileOfSorted(sorted, 50));
  EXPECT_DOUBLE_EQ(s.p90, PercentileOfSorted(sorted, 90));
  EXPECT_DOUBLE_EQ(s.p99, PercentileOfSorted(sorted, 99));
  for (const auto& [p, value] : s.distribution) EXPECT_DOUBLE_EQ(value, PercentileOfSorted(sorted, p)) << p;
  for (const auto& [interval, p] : {std::pair{s.p50_interval, 50.0}, std::pair{s.p99_interval, 99.0}}) {
    EXPECT_EQ(interval.lower, PercentileIntervalOfSorted(sorted, p).lower) << p;
    EXPECT_EQ(interval.upper, PercentileIntervalOfSorted(sorted, p).upper) << p;
  }
}

// An offline batch (every request at t = 0) reports how fast it drained.
TEST(Summarise, OfflineBatchReportsItsDrainThroughput) {
  Workload w = FixedLengthWorkload(4, 16, 10, "batch");
  std::vector<RequestRecord> records(4);
  for (int i = 0; i < 4; ++i) {
    records[i].request_class = "batch";
    records[i].t_first = 1.0 + i;
    records[i].t_last = 2.0 + i;  // drains by t = 5
    records[i].n_out = 10;
  }
  MeasuredRun run;
  run.records = records;
  run.window = MeasurementWindow(w, records);
  EXPECT_EQ(run.window.start, 0.0);
  EXPECT_GT(run.window.end, 5.0);
  const PointResult p = Summarise(w, ArrivalSpec{ArrivalKind::kBatch, 1, 1, 1}, {run});
  EXPECT_NEAR(p.throughput, 40.0 / 5.0, 1e-9);  // 40 tokens in 5 s
  EXPECT_EQ(p.label, "batch");
}

// A class judged over 1-minute windows (by hand): the first minute 100 good
// of 100, the second 20 of 100, 30 s more left out as a part window. Over the
// whole run the p50 holds (120 of 200, the 95% interval above 50%); by window
// the second minute fails, and it is the one shown.
TEST(Summarise, AWindowedSloIsDecidedByItsWorstWindow) {
  Workload w = FixedLengthWorkload(250, 1, 1, "interactive");
  std::vector<RequestRecord> records;
  for (int i = 0; i < 250; ++i) {
    RequestRecord r;
    r.request_class = "interactive";
    r.t_arrival = r.t_sent = i * 0.6;  // 100 a minute: [0, 60), [60, 120), then 50 in [120, 150)
    const bool late = i >= 100 && i < 200 && i % 5 != 0;  // the second minute: 80 of 100 slow
    r.t_first = r.t_arrival + (late ? 2.0 : 0.1);
    r.t_last = *r.t_first + 0.1;
    r.n_out = 2;
    r.ok = true;
    records.push_back(r);
  }
  MeasuredRun run;
  run.records = records;
  run.window = Window{0, 150};
  w.classes[0].slo = ParseSlo("interactive: ttft p50 <= 1s")->classes.at(0);
  const PointResult whole = Summarise(w, ArrivalSpec{}, {run});
  ASSERT_EQ(whole.classes.size(), 1u);
  EXPECT_EQ(whole.classes[0].good, 170);  // 100 + 20 + the last 50
  EXPECT_EQ(whole.classes[0].verdict, Verdict::kHolds);
  EXPECT_EQ(whole.classes[0].window_counts.size(), 0u);
  w.classes[0].slo = ParseSlo("interactive: ttft p50 <= 1s over 1min")->classes.at(0);
  const PointResult windowed = Summarise(w, ArrivalSpec{}, {run});
  const ClassAttainment& c = windowed.classes.at(0);
  EXPECT_EQ(c.window_counts.size(), 2u);  // [120, 150) is not a whole minute
  EXPECT_EQ(c.worst_window, 1);
  EXPECT_EQ(c.good, 20);
  EXPECT_EQ(c.total, 100);
  EXPECT_EQ(c.verdict, Verdict::kFails);
  EXPECT_EQ(windowed.verdict, Verdict::kFails);
  EXPECT_NE(FormatSloWindows({windowed}).find("interactive: window 2 of 2 (60-120 s into the measurement window): "
                                              "20.0%"),
            std::string::npos)
      << FormatSloWindows({windowed});
  EXPECT_EQ(FormatSloWindows({whole}), "");
  // A window without a request of the class has nothing to judge: the
  // second minute emptied leaves the first deciding.
  MeasuredRun gap = run;
  gap.records.erase(gap.records.begin() + 100, gap.records.begin() + 200);
  const ClassAttainment g = Summarise(w, ArrivalSpec{}, {gap}).classes.at(0);
  EXPECT_EQ(g.worst_window, 0);
  EXPECT_EQ(g.verdict, Verdict::kHolds);
  // The ledger keeps which window decided.
  auto back = PointFromJson(boost::json::serialize(PointToJson(windowed)));
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_DOUBLE_EQ(back->classes.at(0).window_s, 60);
  EXPECT_EQ(back->classes.at(0).window_counts.size(), 2u);
  EXPECT_EQ(back->classes.at(0).worst_window, 1);
  const std::vector<std::pair<int64_t, int64_t>> counts = {{100, 100}, {20, 100}};
  EXPECT_EQ(back->classes.at(0).window_counts, counts);
  const std::string text = FormatSloWindows({windowed});
  EXPECT_NE(text.find("fails; by window: hf\n"), std::string::npos) << text;
}

// "over peak" (by hand): a day profile of three 1-minute steps whose busiest
// is the second. The first minute's 100 requests all miss the target, the
// second's all meet it. Judged at the peak, the class holds on the second
// minute alone; judged in every minute, the first decides and it fails.
// The measurement window is the profile's, [0, 180 s), whatever the arrivals.
TEST(Summarise, APeakSloIsJudgedInTheBusiestStepAlone) {
  auto w = ParseWorkload(
      "name: d\nprofile_step: 1m\nclasses:\n  - name: interactive\n    profile: [1, 3, 2]\n"
      "    prompt: fixed:1\n    output: fixed:2\n    slo: ttft p50 <= 1s over peak\n",
      "d.yaml", ".");
  ASSERT_TRUE(w.ok()) << w.status().message();
  MeasuredRun run;
  for (int i = 0; i < 200; ++i) {
    RequestRecord r;
    r.request_class = "interactive";
    r.t_arrival = r.t_sent = 1 + i * 0.6;  // 100 in [0, 60), 100 in [60, 120)
    r.t_first = r.t_arrival + (i < 100 ? 2.0 : 0.1);
    r.t_last = *r.t_first + 0.1;
    r.n_out = 2;
    r.ok = true;
    run.records.push_back(r);
  }
  run.window = MeasurementWindow(*w, run.records);
  EXPECT_EQ(run.window.start, 0);
  EXPECT_EQ(run.window.end, 180);
  const ClassAttainment peak = Summarise(*w, w->arrival, {run}).classes.at(0);
  EXPECT_EQ(peak.judged_window, 1);
  EXPECT_EQ(peak.worst_window, 1);
  EXPECT_EQ(peak.total, 100);
  EXPECT_EQ(peak.verdict, Verdict::kHolds);
  EXPECT_NE(WindowText(peak).find("window 2 of 3 (60-120 s into the measurement window, the peak step)"),
            std::string::npos)
      << WindowText(peak);
  // Without a request in the peak step there is nothing to judge it by (not the whole run's counts).
  MeasuredRun quiet_peak = run;
  quiet_peak.records.resize(98);  // arrivals up to 59.2 s: none in the second minute
  const ClassAttainment none = Summarise(*w, w->arrival, {quiet_peak}).classes.at(0);
  EXPECT_EQ(none.verdict, Verdict::kNoData);
  EXPECT_EQ(none.total, 0);
  w->classes[0].slo = ParseSlo("interactive: ttft p50 <= 1s over 1min")->classes.at(0);
  const ClassAttainment every = Summarise(*w, w->arrival, {run}).classes.at(0);
  EXPECT_EQ(every.worst_window, 0);
  EXPECT_EQ(every.verdict, Verdict::kFails);
  // Without a profile there is no peak to judge.
  MeasurementSpec spec;
  spec.workload = FixedLengthWorkload(10, 1, 1, "interactive");
  spec.workload.classes[0].slo = ParseSlo("interactive: ttft p50 <= 1s over peak")->classes.at(0);
  spec.loads = {ArrivalSpec{}};
  EXPECT_NE(CheckMeasurementSpec(spec).message().find("no profile_step"), std::string::npos);
}

}  // namespace
}  // namespace goodput
