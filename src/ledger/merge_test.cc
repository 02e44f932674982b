#include "ledger/merge.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "measure/point.h"
#include "measure/run.h"
#include "workload/workload.h"

namespace goodput {
namespace {

const char* kWorkload =
    "name: w\nrequests: 40\nclasses:\n  - name: interactive\n    prompt: fixed:10\n"
    "    output: fixed:5\n    slo: ttft p90 <= 1s\n";

// 40 open-loop requests 0.1 s apart; every fourth is slow (TTFT 2 s), the
// rest 0.1 s; four tokens 10 ms apart after the first.
std::vector<RequestRecord> AllRequests() {
  std::vector<RequestRecord> out;
  for (int i = 0; i < 40; ++i) {
    RequestRecord r;
    r.request_class = "interactive";
    r.t_arrival = r.t_sent = 0.1 * i;
    r.t_first = r.t_arrival + (i % 4 == 0 ? 2.0 : 0.1);
    for (int k = 0; k < 5; ++k) r.chunks.push_back({*r.t_first + 0.01 * k, 1});
    r.t_last = r.chunks.back().t;
    r.n_in = 10;
    r.n_out = 5;
    out.push_back(r);
  }
  return out;
}

const ArrivalSpec kLoad{ArrivalKind::kPoisson, 1, 10, 1};

// Stores shard `i` of `n` (requests i, i + n, ...) as a complete run.
int64_t StoreShard(Ledger& l, int i, int n, const std::string& workload = kWorkload) {
  const Workload w = *ParseWorkload(workload, "w.yaml", ".");
  MeasuredRun run;
  const auto all = AllRequests();
  for (size_t k = static_cast<size_t>(i); k < all.size(); k += static_cast<size_t>(n)) run.records.push_back(all[k]);
  run.window = MeasurementWindow(w, run.records);
  run.engine.preemptions = 3;
  RunInfo info;
  info.workload_text = workload;
  info.shard = fmt::format("{}/{}", i, n);
  const int64_t id = *l.BeginRun(info);
  EXPECT_TRUE(RecordPoint(l, id, "", w, Summarise(w, kLoad, {run}), {run}, true).ok());
  EXPECT_TRUE(l.FinishRun(id, "complete").ok());
  return id;
}

// Four shards merged are the one client's run: the same 40 requests, the
// same attainment (30 of 40 within the p90's 1 s: fails) and latencies,
// token times kept through the ledger.
TEST(MergeShards, FourShardsAreOneClient) {
  auto ledger = std::move(Ledger::Open(":memory:").value());
  std::vector<ShardRun> shards;
  for (int i : {2, 0, 3, 1}) shards.push_back({ledger.get(), StoreShard(*ledger, i, 4)});
  auto merged = MergeShards(shards, *ledger, "goodput ledger merge");
  ASSERT_TRUE(merged.ok()) << merged.status().message();
  const Workload w = *ParseWorkload(kWorkload, "w.yaml", ".");
  MeasuredRun one;
  one.records = AllRequests();
  one.window = MeasurementWindow(w, one.records);
  const PointResult direct = Summarise(w, kLoad, {one});
  auto points = ledger->GetPoints(*merged);
  ASSERT_TRUE(points.ok());
  ASSERT_EQ(points->size(), 1u);
  const PointResult& m = points->at(0).summary;
  EXPECT_EQ(m.classes.at(0).total, 40);
  EXPECT_EQ(m.classes.at(0).good, 30);
  EXPECT_EQ(m.classes.at(0).good, direct.classes.at(0).good);
  EXPECT_EQ(m.verdict, Verdict::kFails);
  EXPECT_DOUBLE_EQ(m.ttft.p50, direct.ttft.p50);
  EXPECT_DOUBLE_EQ(m.itl.p50, 0.01);  // from the stored chunks
  EXPECT_DOUBLE_EQ(m.preemptions, 3);
  auto requests = ledger->GetRequests(points->at(0).id);
  ASSERT_TRUE(requests.ok());
  ASSERT_EQ(requests->size(), 1u);
  EXPECT_EQ(requests->at(0).size(), 40u);
  EXPECT_EQ(requests->at(0).at(5).chunks.size(), 5u);
  auto run = ledger->GetRun(*merged);
  EXPECT_EQ(run->info.shard, "");
  EXPECT_EQ(run->status, "complete");
}

TEST(MergeShards, WhatDoesNotFitIsSaid) {
  auto ledger = std::move(Ledger::Open(":memory:").value());
  const auto error = [&](std::vector<ShardRun> s) {
    auto r = MergeShards(s, *ledger, "merge");
    return r.ok() ? std::string("merged") : r.status().message();
  };
  Ledger* l = ledger.get();
  const int64_t a = StoreShard(*l, 0, 2), b = StoreShard(*l, 1, 2);
  EXPECT_NE(error({{l, a}}).find("at least two"), std::string::npos);
  EXPECT_NE(error({{l, a}, {l, a}}).find("given twice"), std::string::npos);
  EXPECT_NE(error({{l, a}, {l, StoreShard(*l, 1, 3)}}).find("a shard of 3"), std::string::npos);
  EXPECT_NE(error({{l, a}, {l, StoreShard(*l, 2, 3)}}).find("a shard of 3"), std::string::npos);
  std::string other = kWorkload;
  other.replace(other.find("p90"), 3, "p99");
  EXPECT_NE(error({{l, a}, {l, StoreShard(*l, 1, 2, other)}}).find("another workload"), std::string::npos);
  const int64_t c = StoreShard(*l, 0, 3), d = StoreShard(*l, 1, 3);
  EXPECT_NE(error({{l, c}, {l, d}}).find("2 of the 3 shards"), std::string::npos);
  RunInfo plain;
  plain.workload_text = kWorkload;
  const int64_t whole = *l->BeginRun(plain);
  ASSERT_TRUE(l->FinishRun(whole, "complete").ok());
  EXPECT_NE(error({{l, a}, {l, whole}}).find("is no shard"), std::string::npos);
  const int64_t running = *l->BeginRun(plain);
  EXPECT_NE(error({{l, a}, {l, running}}).find("not complete"), std::string::npos);
  EXPECT_EQ(error({{l, b}, {l, a}}), "merged");
  EXPECT_FALSE(ParseShard("4/4").ok());
  EXPECT_FALSE(ParseShard("0/1").ok());
  EXPECT_FALSE(ParseShard("1/2x").ok());
  EXPECT_FALSE(ParseShard("1/99999999999").ok());  // past int: sscanf's "%d" took it
  EXPECT_FALSE(ParseShard("1/1025").ok());
  EXPECT_FALSE(ParseShard("/4").ok());
  EXPECT_FALSE(ParseShard("1/").ok());
  EXPECT_FALSE(ParseShard("-1/4").ok());
  EXPECT_NE(ParseShard("1/2000").status().message().find("2 <= N <= 1024"), std::string::npos);
  EXPECT_EQ(ParseShard("1023/1024").value(), (std::pair<int, int>{1023, 1024}));
  EXPECT_EQ(ParseShard("3/4").value(), (std::pair<int, int>{3, 4}));
}

}  // namespace
}  // namespace goodput
