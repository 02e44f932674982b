#include "measure/fleet_size.h"

#include <boost/json.hpp>
#include <gtest/gtest.h>

namespace goodput {
namespace {

// A fleet whose replicas serve `per_replica` clients each within 10 ms;
// beyond that every first token takes 5 s.
class FleetTarget final : public Target {
 public:
  FleetTarget(int replicas, int per_replica) : replicas_(replicas), per_replica_(per_replica) {}
  Result<MeasuredRun> Run(const Workload& w, const ArrivalSpec& load, int) override {
    const double ttft = load.concurrency <= replicas_ * per_replica_ ? 0.010 : 5.0;
    MeasuredRun run;
    for (int64_t i = 0; i < w.requests; ++i) {
      RequestRecord r;
      r.request_class = "interactive";
      r.t_arrival = r.t_sent = 0.1 * static_cast<double>(i);
      r.t_first = r.t_arrival + ttft;
      r.t_last = *r.t_first + 0.07;
      r.n_in = 16;
      r.n_out = 8;
      run.records.push_back(r);
    }
    run.window = MeasurementWindow(w, run.records);
    run.engine.replicas.assign(static_cast<size_t>(replicas_), ReplicaCounts{static_cast<double>(w.requests), 1, {}});
    return run;
  }
  std::string Describe() const override { return "fleet of " + std::to_string(replicas_); }

 private:
  int replicas_, per_replica_;
};

MeasurementSpec TenClients() {
  MeasurementSpec s;
  s.workload = FixedLengthWorkload(40, 16, 8, "interactive");
  s.workload.classes[0].slo = ParseSlo("interactive: ttft p50 <= 1s")->classes.at(0);
  s.loads = {ArrivalSpec{ArrivalKind::kClosedLoop, 10, 1, 1}};
  return s;
}

TargetFactory Fleet(int per_replica) {
  return [=](const Setting& s) -> Result<std::unique_ptr<Target>> {
    const std::string* n = s.Find("replicas");
    if (!n) return Status::InvalidArgument("no replicas flag");
    return std::unique_ptr<Target>(std::make_unique<FleetTarget>(std::stoi(*n), per_replica));
  };
}

// Ten clients at three a replica need four: 1, 2 and 4 are tried doubling,
// then 3 between the last failure and the first pass; 4 replicas of 2 GPUs
// are 8 GPUs.
TEST(FleetSize, DoublesThenBisectsToTheFewestThatHold) {
  auto f = SearchFleetSize(TenClients(), 64, 2, Fleet(3));
  ASSERT_TRUE(f.ok()) << f.status().message();
  std::vector<int> tried;
  for (const FleetProbe& p : f->probes) tried.push_back(p.replicas);
  EXPECT_EQ(tried, (std::vector<int>{1, 2, 4, 3}));
  ASSERT_TRUE(f->replicas.has_value());
  EXPECT_EQ(*f->replicas, 4);
  const std::string text = FormatFleetSize(*f, TenClients().workload);
  EXPECT_NE(text.find("answer: 4 replicas x 2 GPUs = 8 GPUs (3 do not hold)"), std::string::npos) << text;
  const auto json = FleetSizeToJson(*f).as_object();
  EXPECT_EQ(json.at("gpus").as_int64(), 8);
  EXPECT_EQ(json.at("probes").as_array().size(), 4u);
}

TEST(FleetSize, SaysWhenNoneUpToTheMaximumHolds) {
  auto f = SearchFleetSize(TenClients(), 3, 1, Fleet(3));
  ASSERT_TRUE(f.ok()) << f.status().message();
  EXPECT_FALSE(f->replicas.has_value());
  EXPECT_EQ(f->probes.back().replicas, 3);  // 1, 2, then the maximum rather than 4
  EXPECT_NE(FormatFleetSize(*f, TenClients().workload).find("none up to 3 replicas"), std::string::npos);
  EXPECT_TRUE(FleetSizeToJson(*f).as_object().at("replicas").is_null());
}

// Ten clients and a split that holds with at least four prefill instances
// and one decode instance (a FleetTarget of 10 "replicas" holds, of 0 fails).
TargetFactory SplitFleet() {
  return [](const Setting& s) -> Result<std::unique_ptr<Target>> {
    if (const std::string* n = s.Find("replicas")) {
      return std::unique_ptr<Target>(std::make_unique<FleetTarget>(std::stoi(*n), 4));
    }
    const std::string *p = s.Find("prefill-replicas"), *d = s.Find("decode-replicas");
    if (!p || !d) return Status::InvalidArgument("no replicas flags");
    const bool holds = std::stoi(*p) >= 4 && std::stoi(*d) >= 1;
    return std::unique_ptr<Target>(std::make_unique<FleetTarget>(holds ? 10 : 0, 1));
  };
}

// Prefill instances of one GPU beside replicas of four: the aggregated
// answer is 3 replicas (12 GPUs); the split search counts GPUs, so with 4
// prefill GPUs a decode instance fits below 12 (4 + 4 = 8), and nothing with
// five prefill instances can beat 8: the search stops there.
TEST(FleetSize, SplitsOfPrefillInstancesSizedApartCountTheirGpus) {
  auto f = SearchFleetSize(TenClients(), 64, 4, SplitFleet());
  ASSERT_TRUE(f.ok() && f->replicas.has_value()) << f.status().message();
  EXPECT_EQ(*f->replicas, 3);
  f->gpus_per_prefill = 1;
  ASSERT_TRUE(SearchDisaggregatedFleet(TenClients(), SplitFleet(), {}, *f).ok());
  ASSERT_TRUE(f->split.has_value());
  EXPECT_EQ(*f->split, std::make_pair(4, 1));
  for (const FleetProbe& p : f->probes) {
    EXPECT_LE(p.prefill, 4);
    if (p.prefill > 0) {
      EXPECT_LE(FleetGpus(*f, p.prefill, p.replicas), 12);
    }
  }
  const std::string text = FormatFleetSize(*f, TenClients().workload);
  EXPECT_NE(text.find("disaggregated: 4 prefill x 1 GPU + 1 decode x 4 GPUs = 8 GPUs, 4 GPUs fewer"), std::string::npos)
      << text;
  EXPECT_NE(text.find("   4P+1D     8 "), std::string::npos) << text;
  EXPECT_NE(text.find("each replica 4 GPUs, each prefill instance 1 GPU\n"), std::string::npos) << text;
  const auto json = FleetSizeToJson(*f).as_object();
  EXPECT_EQ(json.at("split").at("gpus").as_int64(), 8);
  EXPECT_EQ(json.at("gpus_per_prefill").as_int64(), 1);
}

TEST(FleetSize, WrongSpecsAreErrors) {
  MeasurementSpec two = TenClients();
  two.loads.push_back(two.loads[0]);
  EXPECT_NE(SearchFleetSize(two, 8, 1, Fleet(3)).status().message().find("one load"), std::string::npos);
  MeasurementSpec varied = TenClients();
  varied.vary = {Vary{"max-num-seqs", {"8"}}};
  EXPECT_NE(SearchFleetSize(varied, 8, 1, Fleet(3)).status().message().find("drop --vary"), std::string::npos);
  EXPECT_NE(SearchFleetSize(TenClients(), 0, 1, Fleet(3)).status().message().find("at least 1"), std::string::npos);
}

}  // namespace
}  // namespace goodput
