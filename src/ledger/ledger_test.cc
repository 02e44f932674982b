#include "ledger/ledger.h"

#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>

#include <gtest/gtest.h>

namespace goodput {
namespace {

PointResult Point(int concurrency, double throughput) {
  PointResult p;
  p.load.concurrency = concurrency;
  p.label = std::to_string(concurrency);
  p.repeats = 2;
  p.throughput = throughput;
  p.throughput_spread = 0.05;
  p.holds = true;
  return p;
}

TEST(Ledger, StoresRunsPointsRepetitionsAndRequests) {
  auto ledger = std::move(Ledger::Open(":memory:").value());
  RunInfo info;
  info.command = "goodput sweep ...";
  info.target = "embedded";
  info.workload_name = "chat-cpu";
  info.workload_text = "name: chat-cpu\n";
  const int64_t run = *ledger->BeginRun(info);
  RequestRecord ok;
  ok.request_class = "interactive";
  ok.t_first = 0.2;
  ok.t_last = 0.5;
  ok.n_out = 4;
  RequestRecord bad;
  bad.ok = false;
  bad.error = "HTTP 500: overload";
  ASSERT_TRUE(ledger->AddPoint(run, "", Point(1, 50), 24, {Point(1, 49), Point(1, 51)}, {{ok, bad}, {ok}}).ok());
  ASSERT_TRUE(ledger->AddPoint(run, "", Point(4, 90), 24, {Point(4, 88), Point(4, 92)}, {}).ok());
  ASSERT_TRUE(ledger->AddPoint(run, "", Point(2, 70), 24, {}, {}).ok());  // a search measures out of order
  ASSERT_TRUE(ledger->FinishRun(run, "complete").ok());

  auto stored = ledger->GetRun(run);
  ASSERT_TRUE(stored.ok());
  EXPECT_EQ(stored->status, "complete");
  EXPECT_EQ(stored->points, 3);
  EXPECT_EQ(stored->info.workload_name, "chat-cpu");
  EXPECT_EQ(stored->info.workload_text, "name: chat-cpu\n");
  EXPECT_FALSE(stored->finished_at.empty());
  auto points = *ledger->GetPoints(run);
  ASSERT_EQ(points.size(), 3u);
  EXPECT_EQ(points[1].summary.load.concurrency, 2);  // read back by load
  EXPECT_EQ(points[2].summary.load.concurrency, 4);
  EXPECT_DOUBLE_EQ(points[2].summary.throughput, 90);
  EXPECT_DOUBLE_EQ(points[2].summary.throughput_spread, 0.05);
  EXPECT_EQ(points[2].requests_per_run, 24);
  ASSERT_EQ(points[0].repetitions.size(), 2u);
  EXPECT_DOUBLE_EQ(points[0].repetitions[1].throughput, 51);
  EXPECT_EQ(*ledger->CountRequests(run), 3);
  EXPECT_FALSE(ledger->GetRun(run + 1).ok());
}

// A sweep killed between points keeps every point it committed, and its run
// stays "running" (an interrupted run is visible as such).
TEST(Ledger, AKilledWriterLosesNoCommittedPoint) {
  const std::string path = ::testing::TempDir() + "ledger_" + std::to_string(getpid()) + ".db";
  std::filesystem::remove(path);
  const pid_t child = fork();
  if (child == 0) {
    auto ledger = std::move(Ledger::Open(path).value());
    const int64_t run = *ledger->BeginRun(RunInfo{});
    for (int c = 1; c <= 3; ++c) (void)ledger->AddPoint(run, "", Point(c, 10.0 * c), 10, {}, {});
    _exit(0);  // no FinishRun, no destructors: as if killed
  }
  int status = 0;
  waitpid(child, &status, 0);
  auto ledger = std::move(Ledger::Open(path).value());
  auto runs = *ledger->ListRuns();
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].status, "running");
  EXPECT_EQ(runs[0].points, 3);
  std::filesystem::remove(path);
}

TEST(Ledger, UnopenablePathIsAClearError) {
  auto ledger = Ledger::Open("/nonexistent-dir/x/goodput.db");
  ASSERT_FALSE(ledger.ok());
  EXPECT_NE(ledger.status().message().find("/nonexistent-dir/x/goodput.db"), std::string::npos);
}

}  // namespace
}  // namespace goodput
