#include "core/slo.h"

#include <gtest/gtest.h>

namespace goodput {
namespace {

RequestRecord Rec(double arrival, std::optional<double> first, std::optional<double> last, int64_t n_out,
                  bool ok = true) {
  RequestRecord r;
  r.request_class = "interactive";
  r.t_arrival = r.t_sent = arrival;
  r.t_first = first;
  r.t_last = last;
  r.n_out = n_out;
  r.ok = ok;
  if (!ok) r.error = "timeout";
  return r;
}

TEST(ParseSlo, PerClassClauses) {
  auto slo = ParseSlo("interactive: ttft p99 <= 1s, tpot p99 <= 100ms; batch: e2e p90 < 10min");
  ASSERT_TRUE(slo.ok()) << slo.status().message();
  ASSERT_EQ(slo->classes.size(), 2u);
  const ClassSlo& i = slo->classes[0];
  EXPECT_EQ(i.class_name, "interactive");
  ASSERT_EQ(i.targets.size(), 2u);
  EXPECT_EQ(i.targets[0].metric, SloMetric::kTtft);
  EXPECT_DOUBLE_EQ(i.targets[0].percentile, 99);
  EXPECT_DOUBLE_EQ(i.targets[0].threshold_s, 1.0);
  EXPECT_EQ(i.targets[1].metric, SloMetric::kTpot);
  EXPECT_DOUBLE_EQ(i.targets[1].threshold_s, 0.1);
  EXPECT_DOUBLE_EQ(i.RequiredAttainment(), 0.99);
  EXPECT_TRUE(slo->classes[1].targets[0].strict);
  EXPECT_DOUBLE_EQ(slo->classes[1].RequiredAttainment(), 0.90);
  EXPECT_EQ(slo->For("batch"), &slo->classes[1]);
  EXPECT_EQ(slo->For("offline"), nullptr);
}

TEST(ParseSlo, ClauseWithoutClassAppliesToEveryOtherClass) {
  auto slo = ParseSlo("ttft p50 <= 200ms, tpot p90 <= 50ms");
  ASSERT_TRUE(slo.ok());
  ASSERT_NE(slo->For("anything"), nullptr);
  EXPECT_EQ(slo->For("anything")->class_name, "*");
  EXPECT_DOUBLE_EQ(slo->For("x")->RequiredAttainment(), 0.90);
}

TEST(ParseSlo, CanonicalTextParsesBackToTheSameSpec) {
  auto slo = ParseSlo("interactive: ttft p99 <= 1s, tpot p99.9 < 100ms");
  ASSERT_TRUE(slo.ok());
  auto again = ParseSlo(slo->ToString());
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_EQ(again->ToString(), slo->ToString());
  EXPECT_DOUBLE_EQ(again->classes[0].targets[1].percentile, 99.9);
}

TEST(ParseSlo, BrokenInputNamesTheProblem) {
  auto expect_error = [](const char* text, const char* needle) {
    auto r = ParseSlo(text);
    ASSERT_FALSE(r.ok()) << text;
    EXPECT_NE(r.status().message().find(needle), std::string::npos) << r.status().message();
  };
  expect_error("ttft p99 <= 1", "no unit");
  expect_error("latency p99 <= 1s", "unknown metric 'latency'");
  expect_error("ttft 99 <= 1s", "must look like p99");
  expect_error("ttft p0 <= 1s", "(0, 100]");
  expect_error("ttft p101 <= 1s", "(0, 100]");
  expect_error("ttft p99 <= 1s, ttft p99 < 2s", "names ttft p99 twice");
  expect_error("ttft p99 <= 100000s", "at most a day");
  expect_error("ttft p99 >= 1s", "not of the form");
  expect_error("interactive:", "no targets");
  expect_error("a: ttft p99 <= 1s; a: tpot p99 <= 1s", "appears twice");
  expect_error("", "empty");
  expect_error("ttft p99 <= 0s", "positive");
  expect_error("interactive: ttft p99 <= 1s over 0s", "window 'over 0s' must be a positive duration");
  expect_error("interactive: ttft p99 <= 1s over soon", "window 'over soon' must be a positive duration");
  expect_error("interactive: over 5m", "no targets");
}

// "over 5m" ends a clause: the class is judged in each 5-minute window. The
// canonical text keeps it.
TEST(ParseSlo, AClauseMayNameAWindow) {
  auto slo = ParseSlo("interactive: ttft p99 <= 1s, tpot p99 <= 100ms over 5m; batch: e2e p90 <= 10min");
  ASSERT_TRUE(slo.ok()) << slo.status().message();
  EXPECT_DOUBLE_EQ(slo->For("interactive")->window_s, 300);
  EXPECT_EQ(slo->For("interactive")->targets.size(), 2u);
  EXPECT_DOUBLE_EQ(slo->For("batch")->window_s, 0);
  EXPECT_EQ(slo->ToString(), "interactive: ttft p99 <= 1s, tpot p99 <= 100ms over 300s; batch: e2e p90 <= 600s");
  auto again = ParseSlo(slo->ToString());
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_DOUBLE_EQ(again->For("interactive")->window_s, 300);
}

// "over peak": judged in a day profile's busiest step only; kept in the
// canonical text; a misspelt window is an error that names both forms.
TEST(ParseSlo, AClauseMayBeJudgedAtThePeak) {
  auto slo = ParseSlo("interactive: ttft p99 <= 1s over peak");
  ASSERT_TRUE(slo.ok()) << slo.status().message();
  EXPECT_TRUE(slo->For("interactive")->peak);
  EXPECT_DOUBLE_EQ(slo->For("interactive")->window_s, 0);
  EXPECT_EQ(slo->ToString(), "interactive: ttft p99 <= 1s over peak");
  EXPECT_TRUE(ParseSlo(slo->ToString())->For("interactive")->peak);
  auto bad = ParseSlo("interactive: ttft p99 <= 1s over peek");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("or 'peak'"), std::string::npos) << bad.status().message();
}

// Hand-computed example: SLO ttft p99 <= 1s, tpot p99 <= 100ms.
//   r1 ttft 0.5, tpot (2.5-0.5)/20 = 0.1   -> good (<= is inclusive)
//   r2 ttft 1.2, tpot 0.4/4 = 0.1          -> bad (TTFT)
//   r3 ttft 0.3, one token: no TPOT        -> good
//   r4 failed (timeout)                    -> bad, still counted
//   r5 ttft 0.1, tpot 2/10 = 0.2           -> bad (TPOT)
std::vector<RequestRecord> HandExample() {
  return {Rec(0.0, 0.5, 2.5, 21), Rec(1.0, 2.2, 2.6, 5), Rec(2.0, 2.3, 2.3, 1),
          Rec(2.6, std::nullopt, std::nullopt, 0, false), Rec(3.0, 3.1, 5.1, 11)};
}

TEST(Evaluate, AttainmentKeepsFailuresInTheDenominator) {
  auto slo = ParseSlo("interactive: ttft p99 <= 1s, tpot p99 <= 100ms");
  ASSERT_TRUE(slo.ok());
  const auto records = HandExample();
  SloReport r = Evaluate(records, *slo, Window{0, 5});
  ASSERT_EQ(r.classes.size(), 1u);
  const ClassReport& c = r.classes[0];
  EXPECT_EQ(c.total, 5);
  EXPECT_EQ(c.failed, 1);
  EXPECT_EQ(c.good, 2);
  EXPECT_DOUBLE_EQ(*c.attainment, 0.4);
  EXPECT_FALSE(c.holds);
  EXPECT_FALSE(r.all_hold);
  // Served in [0, 5): r5's 11 tokens come at 3.1, 3.3, ..., 5.1; the last is after the window.
  EXPECT_DOUBLE_EQ(r.output_throughput, (21.0 + 5 + 1 + 0 + 10) / 5.0);
  EXPECT_DOUBLE_EQ(r.request_throughput, 3.0 / 5.0);  // r1, r2, r3 finished inside; r5 after
  // Goodput: the served rate times the good share of the judged requests that
  // succeeded (r1, r3 of r1, r2, r3, r5; r4's failure is not served): 3/5 x 2/4;
  // by tokens, (21 + 1) of (21 + 5 + 1 + 11) output tokens.
  EXPECT_DOUBLE_EQ(c.good_share, 0.5);
  EXPECT_DOUBLE_EQ(r.goodput, 3.0 / 5.0 * 0.5);
  EXPECT_DOUBLE_EQ(r.goodput_tokens, (21.0 + 5 + 1 + 0 + 10) / 5.0 * (22.0 / 38.0));
  ASSERT_EQ(c.targets.size(), 2u);
  // TTFT over the four successful requests {0.1, 0.3, 0.5, 1.2}: r = 2.97 -> 0.5 + 0.97 * 0.7.
  EXPECT_EQ(c.targets[0].applicable, 4);
  EXPECT_EQ(c.targets[0].met, 3);
  EXPECT_NEAR(*c.targets[0].value, 1.179, 1e-12);
  // TPOT only where n_out >= 2: {0.1, 0.1, 0.2}: r = 1.98 -> 0.1 + 0.98 * 0.1.
  EXPECT_EQ(c.targets[1].applicable, 3);
  EXPECT_EQ(c.targets[1].met, 2);
  EXPECT_NEAR(*c.targets[1].value, 0.198, 1e-12);
}

TEST(Evaluate, OneTokenAnswerHasNoTpot) {
  RequestRecord r = Rec(0, 0.2, 0.2, 1);
  EXPECT_FALSE(Tpot(r).has_value());
  auto slo = ParseSlo("tpot p99 <= 1ms");
  EXPECT_TRUE(IsGood(r, slo->For("interactive")));
}

TEST(Evaluate, StrictOperatorExcludesTheThreshold) {
  auto le = ParseSlo("tpot p99 <= 100ms");
  auto lt = ParseSlo("tpot p99 < 100ms");
  RequestRecord r = Rec(0, 0.5, 2.5, 21);  // TPOT exactly 0.1
  EXPECT_TRUE(IsGood(r, le->For("interactive")));
  EXPECT_FALSE(IsGood(r, lt->For("interactive")));
}

TEST(Evaluate, ClassWithoutSloIsMeasuredButNotJudged) {
  auto slo = ParseSlo("interactive: ttft p99 <= 1s");
  auto records = HandExample();
  RequestRecord offline = Rec(1.0, 4.0, 9.0, 100);
  offline.request_class = "offline";
  records.push_back(offline);
  SloReport r = Evaluate(records, *slo, Window{0, 5});
  ASSERT_EQ(r.classes.size(), 2u);
  EXPECT_EQ(r.classes[1].class_name, "offline");
  EXPECT_FALSE(r.classes[1].has_slo);
  EXPECT_TRUE(r.classes[1].holds);
  EXPECT_EQ(r.classes[1].good, 1);
  EXPECT_DOUBLE_EQ(*r.classes[0].attainment, 3.0 / 5.0);  // r5 only fails TPOT, not named here
}

// Attainment judges the arrivals inside the window; goodput is what was
// served inside it (r1 arrived before but finished at 2.5; r2 at 2.6, r3 at
// 2.3) times the good share of the judged: r1's own goodness does not count,
// as it is not judged.
TEST(Evaluate, OnlyArrivalsInsideTheWindowAreJudged) {
  auto slo = ParseSlo("interactive: ttft p99 <= 1s, tpot p99 <= 100ms");
  SloReport r = Evaluate(HandExample(), *slo, Window{1.0, 3.0});  // r2, r3, r4 arrive
  EXPECT_EQ(r.total, 3);
  EXPECT_EQ(r.good, 1);
  EXPECT_DOUBLE_EQ(r.request_throughput, 3.0 / 2.0);
  EXPECT_DOUBLE_EQ(r.goodput, 3.0 / 2.0 * (1.0 / 2.0));  // r3 good of r2, r3 (r4 failed)
}

// A closed loop's first wave, all prefilling at once: every one of its
// requests misses the SLO, every later one meets it. The first wave is
// warm-up (outside the window) but finishes inside it; goodput is the served
// rate, not lowered by requests attainment does not judge.
TEST(Evaluate, GoodputIsNotLoweredByRequestsOutsideTheJudgedSet) {
  auto slo = ParseSlo("interactive: ttft p99 <= 1s");
  std::vector<RequestRecord> records;
  for (int i = 0; i < 10; ++i) records.push_back(Rec(0.0, 3.0, 4.0 + 0.1 * i, 10));  // first wave: TTFT 3 s
  for (int i = 0; i < 10; ++i) records.push_back(Rec(4.0 + 0.1 * i, 4.5 + 0.1 * i, 5.5 + 0.1 * i, 10));
  SloReport r = Evaluate(records, *slo, Window{4.0, 8.0});
  EXPECT_EQ(r.total, 10);
  EXPECT_EQ(r.good, 10);
  EXPECT_DOUBLE_EQ(r.request_throughput, 20.0 / 4.0);
  EXPECT_DOUBLE_EQ(r.goodput, r.request_throughput);
  EXPECT_DOUBLE_EQ(r.goodput_tokens, r.output_throughput);
}

// Overload: 10 requests/s arrive for 10 s but the server finishes one every
// 2 s. Throughput is what was served (1 token / 0.2 s), not what was offered.
TEST(Evaluate, ThroughputIsServedNotOffered) {
  std::vector<RequestRecord> records;
  for (int i = 0; i < 100; ++i) {
    const double start = 2.0 * i;  // the server works on one request at a time
    records.push_back(Rec(0.1 * i, start + 0.2, start + 2.0, 10));  // 10 tokens, 0.2 s apart
  }
  auto slo = ParseSlo("interactive: e2e p50 <= 1h");
  SloReport r = Evaluate(records, *slo, Window{0, 10});
  EXPECT_EQ(r.total, 100);
  EXPECT_NEAR(r.output_throughput, 5.0, 0.2);       // ~49 tokens delivered in 10 s
  EXPECT_NEAR(r.request_throughput, 0.4, 1e-12);    // finished at 2, 4, 6 and 8 (10 is outside)
}

TEST(TokensServedIn, ChunksOrAnEvenSpread) {
  RequestRecord r = Rec(0, 1.0, 2.0, 11);  // no chunks: tokens at 1.0, 1.1, ..., 2.0
  EXPECT_DOUBLE_EQ(TokensServedIn(r, 0, 10), 11);
  EXPECT_DOUBLE_EQ(TokensServedIn(r, 1.05, 1.5), 4);   // 1.1, 1.2, 1.3, 1.4
  EXPECT_DOUBLE_EQ(TokensServedIn(r, 2.0, 3.0), 1);
  EXPECT_DOUBLE_EQ(TokensServedIn(r, 3.0, 4.0), 0);
  r.chunks = {{1.0, 1}, {1.5, 4}, {2.0, 6}};
  EXPECT_DOUBLE_EQ(TokensServedIn(r, 1.2, 2.0), 4);
  EXPECT_DOUBLE_EQ(TokensServedIn(Rec(0, std::nullopt, std::nullopt, 0, false), 0, 10), 0);
}

TEST(EvaluateWindows, ReportsTheWorstWindow) {
  auto slo = ParseSlo("interactive: ttft p99 <= 1s, tpot p99 <= 100ms");
  WindowedReport w = EvaluateWindows(HandExample(), *slo, Window{0, 5}, 2.5);
  ASSERT_EQ(w.windows.size(), 2u);
  EXPECT_DOUBLE_EQ(*w.windows[0].classes[0].attainment, 2.0 / 3.0);  // r1, r2, r3
  EXPECT_DOUBLE_EQ(*w.windows[1].classes[0].attainment, 0.0);        // r4, r5
  EXPECT_EQ(w.worst, 1u);
  EXPECT_DOUBLE_EQ(*w.whole.classes[0].attainment, 0.4);
}

TEST(Itl, MultiTokenChunkSplitsItsGap) {
  RequestRecord r;
  r.chunks = {{1.0, 1}, {1.1, 1}, {1.4, 3}};
  auto itls = Itls(r);
  ASSERT_EQ(itls.size(), 4u);
  EXPECT_NEAR(itls[0], 0.1, 1e-12);
  EXPECT_NEAR(itls[1], 0.1, 1e-12);
  EXPECT_NEAR(itls[3], 0.1, 1e-12);
}

}  // namespace
}  // namespace goodput
