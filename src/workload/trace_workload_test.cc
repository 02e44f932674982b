#include "workload/trace_workload.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "support/temp_file.h"
#include "workload/workload.h"

namespace goodput {
namespace {

using testing::WriteTempFile;

// BurstGPT's columns (its public CSV's header), read as a trace.
TEST(TraceWorkload, BurstGptColumnsAreATrace) {
  auto t = ReadTrace(WriteTempFile("burst.csv",
                                   "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n"
                                   "5,ChatGPT,472,18,490,Conversation log\n"
                                   "45,ChatGPT,1087,184,1271,Conversation log\n"));
  ASSERT_TRUE(t.ok()) << t.status().message();
  ASSERT_EQ(t->size(), 2u);
  EXPECT_DOUBLE_EQ((*t)[1].t, 40);
  EXPECT_EQ((*t)[1].input_tokens, 1087);
  EXPECT_EQ((*t)[1].output_tokens, 184);
}

// By hand: arrivals at 0, 10, ..., 190 s (20 over 190 s); any 60 s from an
// arrival holds 6 of them (0-50 s): 0.1/s. Inputs 100 and 400 alternating:
// mean 250, p50 between the sorted ten 100s and ten 400s 250, log sigma
// ln(4)/2 * sqrt(20/19) (the sample's, n - 1).
TEST(TraceWorkload, SummaryByHand) {
  std::vector<TraceRow> rows;
  for (int i = 0; i < 20; ++i) rows.push_back(TraceRow{10.0 * i, i % 2 ? 400 : 100, 50, "", {}});
  const TraceSummary s = SummariseTrace(rows);
  EXPECT_EQ(s.requests, 20);
  EXPECT_DOUBLE_EQ(s.span_s, 190);
  EXPECT_NEAR(s.mean_rate, 20.0 / 190, 1e-12);
  EXPECT_NEAR(s.peak_minute_rate, 0.1, 1e-12);
  EXPECT_DOUBLE_EQ(s.input.mean, 250);
  EXPECT_DOUBLE_EQ(s.input.p50, 250);
  EXPECT_EQ(s.input.max, 400);
  EXPECT_NEAR(s.input.log_sigma, std::log(4.0) / 2 * std::sqrt(20.0 / 19), 1e-12);
  EXPECT_NEAR(s.output.log_sigma, 0, 1e-12);
}

// Mooncake's hash ids: by hand, request 1 sends blocks a b (1,024 tokens,
// nothing seen), request 2 a b c (its 1,024-token lead reused of 1,500),
// request 3 a x b (512: x was never sent, and b after it is another prefix):
// 1,536 of 3,524 input tokens. A trace without hashes has no figure.
TEST(TraceWorkload, PrefixReuseFromMooncakeHashIds) {
  auto t = ReadTrace(
      WriteTempFile("mooncake-prefix.jsonl",
                    "{\"timestamp\": 0, \"input_length\": 1024, \"output_length\": 1, \"hash_ids\": [1, 2]}\n"
                    "{\"timestamp\": 1, \"input_length\": 1500, \"output_length\": 1, \"hash_ids\": [1, 2, 3]}\n"
                    "{\"timestamp\": 2, \"input_length\": 1000, \"output_length\": 1, \"hash_ids\": [1, 9, 2]}\n"));
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ((*t)[1].block_hashes, (std::vector<int64_t>{1, 2, 3}));
  EXPECT_NEAR(SummariseTrace(*t).prefix_reuse, 1536.0 / 3524, 1e-12);
  std::vector<TraceRow> plain = *t;
  for (auto& r : plain) r.block_hashes.clear();
  EXPECT_LT(SummariseTrace(plain).prefix_reuse, 0);
  EXPECT_FALSE(
      ReadTrace(WriteTempFile("mooncake-bad.jsonl",
                              "{\"timestamp\": 0, \"input_length\": 1, \"output_length\": 1, \"hash_ids\": [\"a\"]}\n"))
          .ok());
}

// The written file loads as a workload that replays the trace, one class per
// class the trace names with its share and fitted lengths.
TEST(TraceWorkload, TheFileReplaysTheTraceAndFitsEachClass) {
  const std::string trace = WriteTempFile("classes.csv",
                                          "timestamp,input_length,output_length,class\n"
                                          "0,100,10,chat\n1,300,10,chat\n2,5000,200,batch\n3,100,30,chat\n");
  auto rows = ReadTrace(trace);
  ASSERT_TRUE(rows.ok());
  const std::string dir = std::filesystem::path(trace).parent_path().string();
  const std::string yaml = TraceWorkloadYaml(SummariseTrace(*rows), std::filesystem::path(trace).filename().string(),
                                             "mine", "ttft p99 <= 2s");
  auto w = ParseWorkload(yaml, "mine.yaml", dir);
  ASSERT_TRUE(w.ok()) << w.status().message() << "\n" << yaml;
  EXPECT_EQ(w->arrival.kind, ArrivalKind::kTrace);
  EXPECT_EQ(w->trace.size(), 4u);
  EXPECT_EQ(w->requests, 4);
  ASSERT_EQ(w->classes.size(), 2u);
  EXPECT_EQ(w->classes[0].name, "batch");
  EXPECT_DOUBLE_EQ(w->classes[0].share, 0.25);
  EXPECT_NE(yaml.find("prompt: fixed:5000"), std::string::npos) << yaml;      // one request: no spread
  // chat: 100, 100, 300; by hand, the percentile at rank p / 100 x 2, linear between ranks.
  EXPECT_NE(yaml.find("prompt: p0=100,p1=100,p2.5=100,p5=100,p10=100,p20=100,p30=100,p40=100,p50=100,p60=140,"
                      "p70=180,p80=220,p90=260,p95=280,p97.5=290,p99=296,p99.5=298,p99.9=300,p100=300\n"),
            std::string::npos)
      << yaml;
  EXPECT_NEAR(w->classes[1].prompt.Quantile(0.75), 200, 1);
  EXPECT_NE(yaml.find("slo: ttft p99 <= 2s"), std::string::npos);
  EXPECT_TRUE(w->Slo().For("chat") != nullptr);
}

// By hand: arrivals every 10 s from 0 to 190 s, class "a", and one "b" at
// 185 s. Per 60 s: three whole steps of six "a" arrivals each (0.1/s); the
// part step from 180 s is left out, and "b" with it. The file it makes loads
// as a profile.
TEST(TraceWorkload, ARateProfileOfWholeSteps) {
  std::vector<TraceRow> rows;
  for (int i = 0; i < 20; ++i) rows.push_back(TraceRow{10.0 * i, 100, 10, "a", {}});
  rows.insert(rows.end() - 1, TraceRow{185, 50, 5, "b", {}});
  auto p = TraceRateProfile(rows, 60);
  ASSERT_TRUE(p.ok()) << p.status().message();
  ASSERT_EQ(p->size(), 1u);
  ASSERT_EQ(p->at("a").size(), 3u);
  for (double r : p->at("a")) EXPECT_NEAR(r, 0.1, 1e-12);
  auto w = ParseWorkload(ProfileWorkloadYaml(SummariseTrace(rows), *p, 60, "t.csv", "t", "ttft p99 <= 1s over 1m"),
                         "t.yaml", ".");
  ASSERT_TRUE(w.ok()) << w.status().message();
  EXPECT_EQ(w->profile_step_s, 60);
  EXPECT_EQ(w->classes.at(0).profile, p->at("a"));
  EXPECT_DOUBLE_EQ(w->classes.at(0).slo->window_s, 60);
  EXPECT_NE(TraceRateProfile(rows, 200).status().message().find("less than one step"), std::string::npos);
  EXPECT_NE(TraceRateProfile(rows, 0.01).status().message().find("at most"), std::string::npos);
}

}  // namespace
}  // namespace goodput
