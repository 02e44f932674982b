#include "workload/day_profile.h"

#include <cmath>

#include <gtest/gtest.h>

#include "core/data_dir.h"
#include "workload/arrivals.h"

namespace goodput {
namespace {

Result<Workload> Parse(const std::string& text) { return ParseWorkload(text, "day.yaml", "."); }

// Two classes over six 100-second steps: interactive busy in the middle,
// offline flat.
const char* kDay = R"(name: day
seed: 3
profile_step: 100s
classes:
  - name: interactive
    profile: [1, 1, 4, 8, 4, 2]
    prompt: fixed:100
    output: fixed:10
    slo: ttft p99 <= 1s over 100s
  - name: offline
    offline: true
    profile: [2, 2, 2, 2, 2, 2]
    prompt: fixed:1000
    output: fixed:100
)";

TEST(DayProfile, ParsesStepsRatesAndTheirLoad) {
  auto w = Parse(kDay);
  ASSERT_TRUE(w.ok()) << w.status().message();
  EXPECT_EQ(w->profile_step_s, 100);
  EXPECT_EQ(w->ProfileSteps(), 6u);
  EXPECT_EQ(w->ProfileEnd(), 600);
  EXPECT_EQ(w->arrival.kind, ArrivalKind::kProfile);
  EXPECT_EQ(w->requests, kMaxRequests);  // the profile's end ends the run
  // 20 interactive requests/s-steps and 12 offline ones, 100 s each.
  EXPECT_DOUBLE_EQ(ExpectedProfileRequests(*w), 3200);
}

// Each step's arrivals are Poisson at that step's rate: counts per step
// within 4 standard deviations of rate x step (hand figures, not the code's),
// none in a step of rate 0, none after the profile's end.
TEST(DayProfile, ArrivalsFollowEachStepsRate) {
  auto w = Parse(R"(name: d
profile_step: 50s
classes:
  - name: a
    profile: [2, 0, 10, 0.5]
    prompt: fixed:10
    output: fixed:2
)");
  ASSERT_TRUE(w.ok()) << w.status().message();
  RequestGenerator gen(*w, w->arrival);
  std::vector<int> counts(5, 0);
  while (auto t = gen.NextOpenArrival()) {
    const WorkItem item = gen.PopOpen();
    EXPECT_EQ(item.t_arrival, *t);
    ++counts[std::min<size_t>(4, static_cast<size_t>(item.t_arrival / 50))];
  }
  const double expect[] = {100, 0, 500, 25};
  for (int k = 0; k < 4; ++k) {
    EXPECT_NEAR(counts[k], expect[k], 4 * std::sqrt(expect[k]) + 0.5) << "step " << k;
  }
  EXPECT_EQ(counts[4], 0);
}

TEST(DayProfile, QuietStepsAreAtMostTheMedianBusyRate) {
  auto w = Parse(kDay);
  ASSERT_TRUE(w.ok());
  // Interactive rates 1 1 4 8 4 2: the lower median is 2, so steps 1, 2
  // and 6 are quiet; the offline class's rates do not count.
  EXPECT_EQ(QuietSteps(*w), (std::vector<bool>{true, true, false, false, false, true}));
  EXPECT_EQ(DescribeSteps(QuietSteps(*w), 100), "steps 1-2, 6");
  EXPECT_EQ(DescribeSteps({false, true, false}, 100), "step 2");
  EXPECT_EQ(DescribeSteps(QuietSteps(*w), 3600), "00:00-02:00, 05:00-06:00");
  EXPECT_EQ(DescribeSteps({false, true, true}, 600), "00:10-00:30");
}

TEST(DayProfile, MovingOfflineWorkKeepsItsVolumeInTheQuietSteps) {
  auto w = Parse(kDay);
  ASSERT_TRUE(w.ok());
  const Workload moved = WithOfflineInQuietSteps(*w);
  // 12 rate-steps of offline work over 3 quiet steps: 4 requests/s each.
  EXPECT_EQ(moved.classes[1].profile, (std::vector<double>{4, 4, 0, 0, 0, 4}));
  EXPECT_EQ(moved.classes[0].profile, w->classes[0].profile);
  EXPECT_DOUBLE_EQ(ExpectedProfileRequests(moved), ExpectedProfileRequests(*w));
}

TEST(DayProfile, BrokenProfilesAreClearErrors) {
  const std::string base =
      "name: d\nprofile_step: 1h\nclasses:\n  - name: a\n    prompt: fixed:10\n"
      "    output: fixed:2\n";
  const auto error = [](const std::string& text) {
    auto w = Parse(text);
    return w.ok() ? std::string("parsed") : w.status().message();
  };
  EXPECT_NE(error(base).find("needs a 'profile'"), std::string::npos) << error(base);
  EXPECT_NE(error(base + "    profile: []\n").find("must list the rate"), std::string::npos);
  EXPECT_NE(error(base + "    profile: [1, -2]\n").find("from 0 to"), std::string::npos);
  EXPECT_NE(error(base + "    profile: [1, .nan]\n").find("from 0 to"), std::string::npos);
  EXPECT_NE(error(base + "    profile: [1, x]\n").find("from 0 to"), std::string::npos);
  EXPECT_NE(error(base + "    profile: [0, 0]\n").find("never get a request"), std::string::npos);
  EXPECT_NE(error(base + "    profile: 3\n").find("must list the rate"), std::string::npos);
  EXPECT_NE(error(base + "    profile: [1]\n    rate: 2\n").find("'rate' and 'profile'"), std::string::npos);
  EXPECT_NE(error(base + "    profile: [1000]\n").find("a run sends at most"), std::string::npos);
  EXPECT_NE(error(base + "    profile: [1]\n  - name: b\n    profile: [1, 2]\n    prompt: fixed:1\n"
                         "    output: fixed:1\n")
                .find("same steps"),
            std::string::npos);
  EXPECT_NE(error(base + "    profile: [1]\narrival: {type: poisson, rate: 2}\n").find("drop the 'arrival'"),
            std::string::npos);
  EXPECT_NE(error(base + "    profile: [1]\nwarmup: 10%\n").find("durations"), std::string::npos);
  EXPECT_NE(error("name: d\nprofile_step: -1h\nclasses: []\n").find("positive duration"), std::string::npos);
  EXPECT_NE(error("name: d\nclasses:\n  - name: a\n    profile: [1]\n    prompt: fixed:1\n    output: fixed:1\n")
                .find("needs the workload's 'profile_step'"),
            std::string::npos);
  EXPECT_NE(error("name: d\narrival: {type: profile}\nclasses:\n  - name: a\n    prompt: fixed:1\n"
                  "    output: fixed:1\n")
                .find("comes from 'profile_step'"),
            std::string::npos);
  std::string long_profile = "    profile: [";
  for (size_t k = 0; k <= kMaxProfileSteps; ++k) long_profile += k ? ",0.001" : "0.001";
  EXPECT_NE(error(base + long_profile + "]\n").find("at most"), std::string::npos);
}

TEST(DayProfile, TheShippedDayLoads) {
  auto w = LoadWorkload(DataDir() + "/workloads/day.yaml");
  ASSERT_TRUE(w.ok()) << w.status().message();
  EXPECT_EQ(w->ProfileSteps(), 24u);
  EXPECT_EQ(w->profile_step_s, 3600);
}

}  // namespace
}  // namespace goodput
