#include "measure/point_json.h"

#include <cmath>
#include <string>

#include <boost/json.hpp>
#include <gtest/gtest.h>

namespace goodput {
namespace {

// A point as Summarise gives it: 30 requests, TTFT 10..39 ms, a steady TPOT.
PointResult Summarised() {
  Workload w;
  w.requests = 30;
  MeasuredRun run;
  for (int i = 0; i < 30; ++i) {
    RequestRecord r;
    r.t_arrival = i;
    r.t_sent = i;
    r.t_first = i + 0.010 + 0.001 * i;
    r.t_last = *r.t_first + 0.2;
    r.n_in = 100;
    r.n_out = 21;
    run.records.push_back(r);
  }
  run.window = MeasurementWindow(w, run.records);
  return Summarise(w, ArrivalSpec{ArrivalKind::kClosedLoop, 2, 1, 1}, {run});
}

// Every figure comes back, the percentiles' intervals with them: 30
// requests bound a p50 on both sides and a p99 only below (its upper side
// is open, written as null and read back as +inf).
TEST(PointJson, RoundTripsEveryFigureAndThePercentilesIntervals) {
  const PointResult p = Summarised();
  ASSERT_TRUE(std::isfinite(p.ttft.p50_interval.upper));
  ASSERT_TRUE(std::isinf(p.ttft.p99_interval.upper));
  const std::string text = boost::json::serialize(PointToJson(p));
  auto back = PointFromJson(text);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->label, "2");
  EXPECT_EQ(back->load.concurrency, 2);
  EXPECT_DOUBLE_EQ(back->throughput, p.throughput);
  EXPECT_DOUBLE_EQ(back->ttft.p50, p.ttft.p50);
  EXPECT_DOUBLE_EQ(back->tpot.p99, p.tpot.p99);
  EXPECT_EQ(back->ttft.count, 30);
  EXPECT_DOUBLE_EQ(back->ttft.p50_interval.lower, p.ttft.p50_interval.lower);
  EXPECT_DOUBLE_EQ(back->ttft.p50_interval.upper, p.ttft.p50_interval.upper);
  EXPECT_DOUBLE_EQ(back->ttft.p99_interval.lower, p.ttft.p99_interval.lower);
  EXPECT_TRUE(std::isinf(back->ttft.p99_interval.upper) && back->ttft.p99_interval.upper > 0);
  // ITL has no chunks here: no value, and no interval either.
  EXPECT_EQ(back->itl.count, 0);
  EXPECT_TRUE(std::isnan(back->itl.p50_interval.upper));
}

// A latency's distribution (the report's CDF) is its own percentiles, from
// the least to the greatest measured value, and comes back as written.
TEST(PointJson, RoundTripsEachLatencysDistribution) {
  const PointResult p = Summarised();
  const auto& d = p.ttft.distribution;
  ASSERT_EQ(d.size(), kDistributionPercentiles.size());
  EXPECT_DOUBLE_EQ(d.front().first, 0);
  EXPECT_DOUBLE_EQ(d.back().first, 100);
  for (size_t i = 1; i < d.size(); ++i) EXPECT_GE(d[i].second, d[i - 1].second) << "a CDF never falls";
  EXPECT_DOUBLE_EQ(d[11].first, 50);
  EXPECT_DOUBLE_EQ(d[11].second, p.ttft.p50);
  EXPECT_NEAR(d.back().second - d.front().second, 0.001 * (p.ttft.count - 1), 1e-9)
      << "consecutive requests' TTFTs are 1 ms apart";
  auto back = PointFromJson(boost::json::serialize(PointToJson(p)));
  ASSERT_TRUE(back.ok()) << back.status().message();
  ASSERT_EQ(back->ttft.distribution.size(), d.size());
  for (size_t i = 0; i < d.size(); ++i) {
    EXPECT_DOUBLE_EQ(back->ttft.distribution[i].first, d[i].first);
    EXPECT_DOUBLE_EQ(back->ttft.distribution[i].second, d[i].second);
  }
  EXPECT_TRUE(back->itl.distribution.empty()) << "no chunks, no ITL";
}

// A point's arrivals come back as they ran: every kind by its name, and a
// gamma point with its shape (a constant profile is shape 1000; read back
// as Poisson, a fit of the stored run would simulate other arrivals).
// A point measured on a real host keeps how busy the host was; a simulated
// one has no such figure and reads back without it.
TEST(PointJson, RoundTripsTheHostsBusyShare) {
  PointResult p = Summarised();
  EXPECT_FALSE(PointFromJson(boost::json::serialize(PointToJson(p)))->host_others_share.has_value());
  p.host_others_share = 0.27;
  auto back = PointFromJson(boost::json::serialize(PointToJson(p)));
  ASSERT_TRUE(back.ok()) << back.status().message();
  ASSERT_TRUE(back->host_others_share.has_value());
  EXPECT_DOUBLE_EQ(*back->host_others_share, 0.27);
}

// The prefix cache's counts come back as written; a point without them (a
// target that could not see them) reads back without.
TEST(PointJson, RoundTripsThePrefixCacheCounts) {
  PointResult p = Summarised();
  EXPECT_FALSE(PointFromJson(boost::json::serialize(PointToJson(p)))->prefix_cache.has_value());
  p.prefix_cache = PrefixCacheCounts{3524, 1536};
  const std::string text = boost::json::serialize(PointToJson(p));
  EXPECT_NE(text.find("\"hit_rate\":"), std::string::npos) << text;
  auto back = PointFromJson(text);
  ASSERT_TRUE(back.ok()) << back.status().message();
  ASSERT_TRUE(back->prefix_cache.has_value());
  EXPECT_DOUBLE_EQ(back->prefix_cache->queries, 3524);
  EXPECT_DOUBLE_EQ(back->prefix_cache->hits, 1536);
  EXPECT_FALSE(PointFromJson(R"({"prefix_cache": {"hit_tokens": "many"}})").ok());
}

// A load that was not sustainable reads back as such, with its evidence (and
// fails, whatever its classes' verdicts); a summary written before the field
// reads back as sustained.
TEST(PointJson, RoundTripsANotSustainableLoadAndItsEvidence) {
  PointResult p = Summarised();
  p.saturation = Saturation{true, 40, 0.31, 27.6, 0.71};
  p.verdict = Verdict::kFails;
  const boost::json::value doc = PointToJson(p);
  EXPECT_EQ(doc.at("verdict").as_string(), "not sustainable");
  auto back = PointFromJson(boost::json::serialize(doc));
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_TRUE(back->saturation.saturated);
  EXPECT_EQ(back->verdict, Verdict::kFails);
  EXPECT_EQ(back->saturation.Evidence(), p.saturation.Evidence());
  boost::json::object older = doc.as_object();
  older.erase("saturation");
  older["verdict"] = "holds";
  older["holds"] = true;
  auto old = PointFromJson(boost::json::serialize(older));
  ASSERT_TRUE(old.ok());
  EXPECT_FALSE(old->saturation.saturated);
  EXPECT_TRUE(old->holds());
  older["saturation"] = boost::json::object{{"served_share", "most"}};
  EXPECT_EQ(PointFromJson(boost::json::serialize(older)).status().message(),
            "stored summary: saturation: 'served_share' is not a number");
}

TEST(PointJson, RoundTripsTheArrivalKindAndAGammaPointsShape) {
  for (ArrivalKind kind : {ArrivalKind::kClosedLoop, ArrivalKind::kPoisson, ArrivalKind::kGamma, ArrivalKind::kTrace,
                           ArrivalKind::kBatch}) {
    PointResult p = Summarised();
    p.load = ArrivalSpec{kind, 2, 4.5, 1000};
    auto back = PointFromJson(boost::json::serialize(PointToJson(p)));
    ASSERT_TRUE(back.ok()) << back.status().message();
    EXPECT_EQ(back->load.kind, kind) << ArrivalKindName(kind);
    EXPECT_DOUBLE_EQ(back->load.rate, 4.5);
    EXPECT_DOUBLE_EQ(back->load.burstiness, kind == ArrivalKind::kGamma ? 1000 : 1) << ArrivalKindName(kind);
  }
  // Written before the shape was kept: gamma of shape 1, which is Poisson.
  auto older = PointFromJson(R"({"load": "4/s", "arrival": "gamma", "rate": 4})");
  ASSERT_TRUE(older.ok()) << older.status().message();
  EXPECT_EQ(older->load.kind, ArrivalKind::kGamma);
  EXPECT_DOUBLE_EQ(older->load.burstiness, 1);
}

// The SLO margin by hand: TTFTs 10, 11, ..., 39 ms; their p90 (linear
// between ranks) is 10 + 0.9 x 29 = 36.1 ms, so a 50 ms target leaves
// 1 - 36.1 / 50 = 0.278; a 20 ms target is missed by 36.1 / 20 - 1; with a
// second target the worse counts (p50 24.5 ms against 20 ms: -0.225).
TEST(PointJson, TheSloMarginIsTheWorstTargetsDistanceAndRoundTrips) {
  for (auto [slo, margin] : {std::pair{"ttft p90 <= 50ms", 0.278}, {"ttft p90 <= 50ms, ttft p50 <= 20ms", -0.225},
                             {"ttft p90 <= 20ms", -0.805}}) {
    Workload w;
    w.requests = 30;
    RequestClass c;
    c.name = "interactive";
    c.slo = ParseSlo(slo)->classes.front();
    w.classes.push_back(c);
    PointResult plain = Summarised();
    MeasuredRun run;
    for (int i = 0; i < 30; ++i) {
      RequestRecord r;
      r.request_class = "interactive";
      r.t_arrival = r.t_sent = i;
      r.t_first = i + 0.010 + 0.001 * i;
      r.t_last = *r.t_first + 0.2;
      r.n_out = 21;
      run.records.push_back(r);
    }
    run.window = MeasurementWindow(w, run.records);
    const PointResult p = Summarise(w, plain.load, {run});
    ASSERT_EQ(p.classes.size(), 1u);
    EXPECT_NEAR(p.classes[0].slo_margin, margin, 1e-9) << slo;
    EXPECT_NEAR(p.slo_margin, margin, 1e-9) << slo;
    const bool p50 = std::string(slo).find("p50") != std::string::npos;
    const char* worst = p50          ? "ttft p50 24.5 ms (target 20.0 ms)"
                        : margin > 0 ? "ttft p90 36.1 ms (target 50.0 ms)"
                                     : "ttft p90 36.1 ms (target 20.0 ms)";
    EXPECT_EQ(p.classes[0].slo_worst, worst);
    auto back = PointFromJson(boost::json::serialize(PointToJson(p)));
    ASSERT_TRUE(back.ok()) << back.status().message();
    EXPECT_NEAR(back->slo_margin, margin, 1e-9);
    EXPECT_NEAR(back->classes.at(0).slo_margin, margin, 1e-9);
    EXPECT_EQ(back->classes.at(0).slo_worst, p.classes[0].slo_worst);
    EXPECT_TRUE(std::isnan(plain.slo_margin));  // no SLO: no margin
  }
}

// A summary written before the intervals were stored keeps them unknown.
TEST(PointJson, AnOlderSummaryWithoutIntervalsReadsAsUnknown) {
  auto back = PointFromJson(R"({"load": "4", "latency": {"ttft": {"p50_s": 0.02, "count": 10}}})");
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_DOUBLE_EQ(back->ttft.p50, 0.02);
  EXPECT_TRUE(std::isnan(back->ttft.p50_interval.lower));
}

TEST(PointJson, BrokenSummariesAreErrorsThatSayWhat) {
  for (auto [text, says] : {std::pair{"{not json", "not JSON"},
                            {"[1, 2]", "not a JSON object"},
                            {R"({"throughput_tokens_per_s": "fast"})", "throughput_tokens_per_s"},
                            {R"({"latency": {"tpot": {"p50_s": true}}})", "tpot"},
                            {R"({"arrival": "gamma", "burstiness": "bursty"})", "burstiness"},
                            {R"({"arrival": "gamma", "burstiness": 0})", "'burstiness' must be positive"},
                            {R"({"latency": {"ttft": {"distribution_s": [[50]]}}})", "not [percentile, value]"},
                            {R"({"latency": {"ttft": {"distribution_s": [[50, 1], [40, 2]]}}})", "must rise"},
                            {R"({"latency": {"ttft": {"distribution_s": [[101, 1]]}}})", "within 0-100"}}) {
    auto r = PointFromJson(text);
    ASSERT_FALSE(r.ok()) << text;
    EXPECT_NE(r.status().message().find(says), std::string::npos) << r.status().message();
  }
}

}  // namespace
}  // namespace goodput
