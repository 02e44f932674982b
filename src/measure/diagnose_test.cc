#include "measure/diagnose.h"

#include <gtest/gtest.h>

#include "measure/point_report.h"

namespace goodput {
namespace {

PointResult Point(int concurrency, double throughput, double goodput, double tpot_p50) {
  PointResult p;
  p.load.concurrency = concurrency;
  p.label = std::to_string(concurrency);
  p.throughput = throughput;
  p.goodput = goodput;
  p.tpot.p50 = tpot_p50;
  return p;
}

TEST(Diagnose, CleanLadderSaysNothing) {
  EXPECT_TRUE(Diagnose({Point(1, 100, 1, 0.010), Point(8, 600, 6, 0.014), Point(64, 2000, 18, 0.030)}, 0.01).empty());
}

TEST(Diagnose, EachWarningFires) {
  std::vector<PointResult> ladder = {Point(1, 100, 1, 0.010), Point(8, 600, 6, 0.0102), Point(64, 700, 2, 0.0105)};
  ladder[0].failed = 2;
  ladder[0].top_error = "HTTP 500: overload (x2)";
  ladder[1].send_lag_p99 = 0.05;
  ladder[1].usage_mismatch = 3;
  ladder[2].usage_mismatch = 1;
  const auto notes = Diagnose(ladder, 0.01);
  ASSERT_EQ(notes.size(), 5u);
  EXPECT_EQ(notes[0], "load 1: 2 failed requests per run, e.g. HTTP 500: overload (x2)");
  EXPECT_NE(notes[1].find("load 8: client send lag p99 50.0 ms > 10.0 ms"), std::string::npos) << notes[1];
  EXPECT_EQ(notes[2].rfind("loads 8, 64: some requests' usage disagrees", 0), 0u) << notes[2];  // merged
  EXPECT_EQ(notes[3], "load 8 -> 64: throughput rises while goodput falls: past the knee");
  EXPECT_NE(notes[4].find("per-token time stays flat"), std::string::npos);  // 10 ms -> 10.5 ms over 64x clients
}

// Points measured while other processes took the host's CPU are flagged, one
// line for every such load; a quiet host's few percent are not.
TEST(Diagnose, ABusyHostIsSaid) {
  std::vector<PointResult> ladder = {Point(1, 100, 1, 0.010), Point(8, 600, 6, 0.014), Point(64, 2000, 18, 0.030)};
  ladder[0].host_others_share = 0.04;
  ladder[1].host_others_share = 0.45;
  ladder[2].host_others_share = 0.31;
  const auto notes = Diagnose(ladder, 0.01);
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_NE(notes[0].find("8, 64"), std::string::npos) << notes[0];
  EXPECT_NE(notes[0].find("measured on a busy host: other processes took more than 10%"), std::string::npos)
      << notes[0];
}

// An engine whose max_num_seqs caps the batch keeps TPOT flat while requests
// queue: TTFT rises, and the engine is the bottleneck after all.
TEST(Diagnose, FlatTpotWithQueueingIsNotOverhead) {
  std::vector<PointResult> ladder = {Point(1, 100, 1, 0.010), Point(8, 400, 0.5, 0.0102), Point(64, 400, 0, 0.0105)};
  ladder[0].ttft.p50 = 0.02;
  ladder[1].ttft.p50 = 1.6;
  ladder[2].ttft.p50 = 24;
  for (const auto& n : Diagnose(ladder, 0.01)) {
    EXPECT_EQ(n.find("per-token time stays flat"), std::string::npos) << n;
    EXPECT_EQ(n.find("max_num_seqs"), std::string::npos) << n;  // throughput rose 4x: more ran at once
  }
}

// The source document's configuration cause (--max-num-seqs 1, clients 1 to
// 8): TPOT and throughput flat while TTFT grows from 25 ms to 4.66 s.
TEST(Diagnose, FlatTpotAndThroughputWithQueueingIsASequenceCap) {
  std::vector<PointResult> ladder = {Point(1, 153, 0.6, 0.0064), Point(2, 153, 0.2, 0.0064), Point(4, 152, 0, 0.0064),
                                     Point(8, 154, 0, 0.0065)};
  ladder[0].ttft.p50 = 0.025;
  ladder[1].ttft.p50 = 1.2;
  ladder[2].ttft.p50 = 3.1;
  ladder[3].ttft.p50 = 4.66;
  const auto notes = Diagnose(ladder, 0.01);
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_EQ(notes[0], "concurrency 1 -> 8: per-token time and throughput stay flat while TTFT grows 25.0 ms -> 4.66 s: "
                      "the engine runs no more requests at once; a concurrency cap (max_num_seqs?) is queueing "
                      "requests");
  ladder.resize(2);  // clients only doubled: too little to tell
  EXPECT_TRUE(Diagnose(ladder, 0.01).empty());
}

// What the client noticed about single requests reaches the reader once per note.
TEST(Diagnose, RequestNotesAreSaid) {
  std::vector<PointResult> ladder = {Point(1, 100, 1, 0.010), Point(8, 600, 6, 0.014)};
  ladder[0].request_notes = {"WARNING: no usage chunk: output tokens counted from chunks (3 requests)"};
  ladder[1].request_notes = ladder[0].request_notes;
  const auto notes = Diagnose(ladder, 0.01);
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_EQ(notes[0], "loads 1, 8: WARNING: no usage chunk: output tokens counted from chunks (3 requests)");
}

// An open-loop rate the target cannot keep up with is said to be unsustainable, with its evidence.
TEST(Diagnose, OpenLoopBeyondCapacityIsUnsustainable) {
  PointResult ok = Point(1, 100, 1, 0.01), over = Point(1, 100, 1, 0.01);
  ok.load = ArrivalSpec{ArrivalKind::kPoisson, 1, 4.0, 1};
  ok.label = "4/s";
  over.load = ArrivalSpec{ArrivalKind::kPoisson, 1, 8.0, 1};
  over.label = "8/s";
  over.saturation = Saturation{true, 8, 0.65, 2.8, 0.35};
  const auto notes = Diagnose({ok, over}, 0.01);
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_EQ(notes[0].rfind("load 8/s: not sustainable: 65% of the 8 requests/s offered were served (in a window as "
                           "long, one median latency later), the backlog grew by 2.80 requests/s, TTFT rose 0.35 s "
                           "per second of the run",
                           0),
            0u)
      << notes[0];
}

TEST(Diagnose, KvTokensAndMaxNumSeqsAdvice) {
  EXPECT_EQ(KvTokensFromStartupLog("x\nGPU KV cache size: 21,840 tokens\nMaximum concurrency ..."), 21840);
  EXPECT_FALSE(KvTokensFromStartupLog("nothing here").has_value());
  Workload w = FixedLengthWorkload(10, 300, 100);  // 400 tokens per request
  const std::string advice = MaxNumSeqsAdvice(21840, w, Point(11, 0, 0, 0));
  EXPECT_NE(advice.find("planner 54 (the KV pool's 21,840 tokens / 400 tokens"), std::string::npos) << advice;
  EXPECT_NE(advice.find("measured 11"), std::string::npos);
  EXPECT_NE(advice.find("recommended 11"), std::string::npos);
  PointResult open = Point(1, 0, 0, 0);
  open.load.kind = ArrivalKind::kPoisson;
  EXPECT_EQ(MaxNumSeqsAdvice(21840, w, open), "");
}

// Seconds-long latencies in ms are wider than the column was: the table
// widens to its widest cell and keeps two spaces between columns.
TEST(LatencyTable, WideCellsDoNotRunIntoTheNextColumn) {
  PointResult p = Point(256, 100, 1, 0.010);
  p.ttft.count = 10;
  for (double* v : {&p.ttft.p50, &p.ttft.p90, &p.ttft.p99, &p.ttft.mean}) *v = 28254.292;
  p.tpot.count = 10;
  const std::string table = FormatLatencyTable({p});
  EXPECT_NE(table.find("28254292 / 28254292 / 28254292 / 28254292  "), std::string::npos) << table;
}

// The prefix cache's section: each load's hit rate with its tokens, and no
// section when nothing was found in the cache (distinct prompts).
TEST(PointReport, PrefixCacheHitRatePerLoad) {
  PointResult a, b;
  a.label = "1/s";
  b.label = "2/s";
  a.prefix_cache = PrefixCacheCounts{4000, 1536};
  b.prefix_cache = PrefixCacheCounts{4000, 0};
  const std::string s = FormatPrefixCache({a, b});
  EXPECT_NE(s.find("1/s  hit rate 38.4% (1536 of 4000 tokens)"), std::string::npos) << s;
  EXPECT_NE(s.find("2/s  hit rate 0.0% (0 of 4000 tokens)"), std::string::npos) << s;
  EXPECT_EQ(FormatPrefixCache({b}), "");
  EXPECT_EQ(FormatPrefixCache({PointResult{}}), "");
}

}  // namespace
}  // namespace goodput
