#include "measure/offline_remedies.h"

#include <gtest/gtest.h>

#include "workload/day_profile.h"

namespace goodput {
namespace {

Workload Day(const std::string& interactive_slo, bool offline) {
  std::string text =
      "name: d\nprofile_step: 10m\nclasses:\n  - name: interactive\n    profile: [1, 3, 1]\n"
      "    prompt: fixed:10\n    output: fixed:2\n";
  if (!interactive_slo.empty()) text += "    slo: " + interactive_slo + "\n";
  if (offline)
    text +=
        "  - name: batch\n    offline: true\n    profile: [2, 2, 2]\n    prompt: fixed:10\n"
        "    output: fixed:2\n";
  auto w = ParseWorkload(text, "d.yaml", ".");
  EXPECT_TRUE(w.ok()) << w.status().message();
  return *w;
}

TEST(OfflineRemedies, ThreeArrangementsOfTheSameWork) {
  auto a = OfflineArrangements(Day("ttft p99 <= 1s over 10m", true), 3);
  ASSERT_TRUE(a.ok()) << a.status().message();
  ASSERT_EQ(a->size(), 3u);
  EXPECT_EQ((*a)[0].workload.classes[1].profile, (std::vector<double>{2, 2, 2}));
  EXPECT_TRUE((*a)[0].flags.empty());
  // Quiet steps 1 and 3 (interactive 1 <= its median 1): 6 rate-steps over two.
  EXPECT_EQ((*a)[1].workload.classes[1].profile, (std::vector<double>{3, 0, 3}));
  EXPECT_NE((*a)[1].description.find("00:00-00:10, 00:20-00:30"), std::string::npos) << (*a)[1].description;
  EXPECT_TRUE((*a)[1].flags.empty());
  EXPECT_EQ((*a)[2].workload.classes[1].profile, (std::vector<double>{2, 2, 2}));
  ASSERT_EQ((*a)[2].flags.size(), 2u);
  EXPECT_EQ((*a)[2].flags[0].flag, "scheduling-policy");
  EXPECT_EQ((*a)[2].flags[0].values, std::vector<std::string>{"priority"});
  EXPECT_EQ((*a)[2].flags[1].flag, "max-offline-seqs");
  EXPECT_EQ((*a)[2].flags[1].values, std::vector<std::string>{"3"});
}

TEST(OfflineRemedies, WhatItNeedsIsSaid) {
  const auto error = [](const Workload& w, int cap) {
    auto a = OfflineArrangements(w, cap);
    return a.ok() ? std::string("ok") : a.status().message();
  };
  Workload flat = Day("ttft p99 <= 1s over 10m", true);
  flat.profile_step_s = 0;
  EXPECT_NE(error(flat, 4).find("needs a day profile"), std::string::npos);
  EXPECT_NE(error(Day("ttft p99 <= 1s over 10m", false), 4).find("no offline class"), std::string::npos);
  EXPECT_NE(error(Day("ttft p99 <= 1s", true), 4).find("SLO with a window"), std::string::npos);
  EXPECT_NE(error(Day("", true), 4).find("SLO with a window"), std::string::npos);
  EXPECT_NE(error(Day("ttft p99 <= 1s over 10m", true), 0).find("at least 1"), std::string::npos);
  MeasurementSpec spec;
  spec.workload = Day("ttft p99 <= 1s over 10m", true);
  spec.loads = {spec.workload.arrival};
  spec.vary = {Vary{"max-num-seqs", {"8"}}};
  auto r = CompareOfflineArrangements(spec, 4, [](const Setting&) -> Result<std::unique_ptr<Target>> {
    return Status::InvalidArgument("not reached");
  });
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("drop --vary"), std::string::npos);
}

}  // namespace
}  // namespace goodput
