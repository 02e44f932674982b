#include "ledger/ledger.h"

#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <thread>

#include <SQLiteCpp/SQLiteCpp.h>

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
  p.verdict = Verdict::kHolds;
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
  EXPECT_DOUBLE_EQ(points[0].repetitions[1].throughput_spread, 0.05) << "a repetition's whole summary is read back";
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
  EXPECT_EQ(runs[0].status, "interrupted");  // still 'running' in the file; its process is gone
  EXPECT_EQ(runs[0].points, 3);
  const int64_t mine = *ledger->BeginRun(RunInfo{});
  EXPECT_EQ(ledger->GetRun(mine)->status, "running");  // this process is alive
  std::filesystem::remove(path);
}

// Another program's SQLite database is refused and left as it was: no
// ledger tables, no switch to WAL (opening it once created the ledger's tables
// inside it). A table named runs of another shape is not a ledger's either.
TEST(Ledger, AnotherProgramsDatabaseIsRefusedUntouched) {
  for (const char* schema : {"CREATE TABLE foo (x)", "CREATE TABLE runs (id INTEGER PRIMARY KEY, x TEXT)"}) {
    const std::string path = ::testing::TempDir() + "foreign_" + std::to_string(getpid()) + ".db";
    std::filesystem::remove(path);
    {
      SQLite::Database db(path, SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
      db.exec(schema);
    }
    auto ledger = Ledger::Open(path);
    ASSERT_FALSE(ledger.ok()) << schema;
    EXPECT_NE(ledger.status().message().find("not a goodput ledger: an SQLite database of other tables ("),
              std::string::npos)
        << ledger.status().message();
    SQLite::Database db(path, SQLite::OPEN_READONLY);
    EXPECT_EQ(db.execAndGet("SELECT COUNT(*) FROM sqlite_master WHERE type = 'table'").getInt(), 1) << schema;
    EXPECT_EQ(db.execAndGet("PRAGMA journal_mode").getString(), "delete") << schema;
  }
}

// A ledger written before runs and studies kept their owner gets the column
// on opening; its rows have none, so a run left running stays running. Its
// requests table gets the columns added since.
TEST(Ledger, AnOlderLedgerGetsTheOwnerColumn) {
  const std::string path = ::testing::TempDir() + "old_ledger_" + std::to_string(getpid()) + ".db";
  std::filesystem::remove(path);
  {
    SQLite::Database db(path, SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
    db.exec("CREATE TABLE runs (id INTEGER PRIMARY KEY, started_at TEXT NOT NULL DEFAULT (datetime('now')), "
            "finished_at TEXT, status TEXT NOT NULL DEFAULT 'running', command TEXT, target TEXT, model TEXT, "
            "hardware TEXT, workload_name TEXT, workload TEXT, slo TEXT, version TEXT, host TEXT)");
    db.exec("CREATE TABLE studies (id INTEGER PRIMARY KEY, started_at TEXT NOT NULL DEFAULT (datetime('now')), "
            "finished_at TEXT, status TEXT NOT NULL DEFAULT 'running', kind TEXT NOT NULL, command TEXT, "
            "summary TEXT)");
    db.exec("INSERT INTO runs (command) VALUES ('goodput bench')");
    db.exec(
        "CREATE TABLE requests (point_id INTEGER NOT NULL, repetition INTEGER NOT NULL, class TEXT, "
        "t_arrival REAL, t_sent REAL, t_first REAL, t_last REAL, n_in INTEGER, n_out INTEGER, ok INTEGER, "
        "error TEXT)");
    db.exec("INSERT INTO requests VALUES (7, 1, 'chat', 0.5, 0.5, 0.7, 0.9, 10, 3, 1, '')");
  }
  auto ledger = Ledger::Open(path);
  ASSERT_TRUE(ledger.ok()) << ledger.status().message();
  auto runs = (*ledger)->ListRuns();
  ASSERT_TRUE(runs.ok()) << runs.status().message();
  ASSERT_EQ(runs->size(), 1u);
  EXPECT_EQ((*runs)[0].status, "running");
  EXPECT_TRUE((*ledger)->BeginRun(RunInfo{}).ok());
  EXPECT_TRUE((*ledger)->BeginStudy("tune", "goodput tune").ok());
  // Its requests read back without the token chunks and first-wave marks it never kept.
  auto requests = (*ledger)->GetRequests(7);
  ASSERT_TRUE(requests.ok()) << requests.status().message();
  ASSERT_EQ(requests->size(), 1u);
  ASSERT_EQ(requests->at(0).size(), 1u);
  EXPECT_EQ(requests->at(0)[0].n_out, 3);
  EXPECT_TRUE(requests->at(0)[0].chunks.empty());
  EXPECT_FALSE(requests->at(0)[0].first_wave);
  std::filesystem::remove(path);
}

std::string TempLedger(const std::string& name) {
  const std::string path = ::testing::TempDir() + name + "_" + std::to_string(getpid()) + ".db";
  std::filesystem::remove(path);
  return path;
}

// Every figure of a summary comes back from the ledger, verdicts and
// intervals included.
TEST(Ledger, SummariesComeBackWhole) {
  auto ledger = std::move(Ledger::Open(":memory:").value());
  const int64_t run = *ledger->BeginRun(RunInfo{});
  PointResult p = Point(8, 120);
  p.verdict = Verdict::kUndecided;
  p.ttft.p50 = 0.1, p.ttft.p90 = 0.2, p.ttft.p99 = 0.3, p.ttft.mean = 0.15, p.ttft.count = 480;
  p.itl.p50 = 0.01, p.itl.p90 = 0.02, p.itl.p99 = 0.05, p.itl.mean = 0.012, p.itl.count = 9000;
  ClassAttainment c;
  c.class_name = "interactive";
  c.has_slo = true;
  c.total = 480;
  c.good = 476;
  c.attainment = 476.0 / 480;
  c.interval = Interval{0.978, 0.996};
  c.required = 0.99;
  c.min_requests = 381;
  c.verdict = Verdict::kUndecided;
  c.throughput = 100;
  p.classes = {c};
  ASSERT_TRUE(ledger->AddPoint(run, "max-num-seqs=8", p, 500, {}, {}).ok());
  const auto points = *ledger->GetPoints(run);
  ASSERT_EQ(points.size(), 1u);
  EXPECT_TRUE(points[0].summary_error.empty()) << points[0].summary_error;
  const PointResult& back = points[0].summary;
  EXPECT_EQ(back.verdict, Verdict::kUndecided);
  EXPECT_DOUBLE_EQ(back.ttft.p90, 0.2);
  EXPECT_EQ(back.itl.count, 9000);
  ASSERT_EQ(back.classes.size(), 1u);
  EXPECT_EQ(back.classes[0].total, 480);
  EXPECT_EQ(back.classes[0].verdict, Verdict::kUndecided);
  EXPECT_DOUBLE_EQ(back.classes[0].interval.lower, 0.978);
  EXPECT_EQ(back.classes[0].min_requests, 381);
}

// A summary that cannot be read (hand-edited, truncated) leaves the point
// readable from its columns, with the reason.
TEST(Ledger, MalformedStoredSummaryFallsBackToTheColumns) {
  const std::string path = TempLedger("ledger_malformed");
  {
    auto ledger = std::move(Ledger::Open(path).value());
    const int64_t run = *ledger->BeginRun(RunInfo{});
    ASSERT_TRUE(ledger->AddPoint(run, "", Point(4, 90), 24, {}, {}).ok());
  }
  SQLite::Database raw(path, SQLite::OPEN_READWRITE);
  raw.exec("UPDATE points SET summary = '{\"classes\": [42'");
  auto ledger = std::move(Ledger::Open(path).value());
  auto points = ledger->GetPoints(1);
  ASSERT_TRUE(points.ok()) << points.status().message();
  ASSERT_EQ(points->size(), 1u);
  EXPECT_NE((*points)[0].summary_error.find("not JSON"), std::string::npos) << (*points)[0].summary_error;
  EXPECT_DOUBLE_EQ((*points)[0].summary.throughput, 90);
  std::filesystem::remove(path);
}

// Two sweeps and a reader on one ledger at once: nobody fails with
// "database is locked", and every point lands.
TEST(Ledger, ConcurrentWritersAndAReaderNeverFail) {
  const std::string path = TempLedger("ledger_concurrent");
  std::atomic<int> failures{0};
  std::atomic<bool> writing{true};
  auto writer = [&] {
    auto ledger = Ledger::Open(path);
    if (!ledger.ok()) return (void)++failures;
    auto run = (*ledger)->BeginRun(RunInfo{});
    if (!run.ok()) return (void)++failures;
    for (int c = 1; c <= 20; ++c) {
      std::vector<RequestRecord> records(50);
      if (!(*ledger)->AddPoint(*run, "", Point(c, c), 50, {Point(c, c), Point(c, c)}, {records, records}).ok())
        ++failures;
    }
    if (!(*ledger)->FinishRun(*run, "complete").ok()) ++failures;
  };
  std::thread reader([&] {
    while (writing) {
      auto ledger = Ledger::Open(path);
      if (!ledger.ok() || !(*ledger)->ListRuns().ok() || !(*ledger)->GetPoints(1).ok()) ++failures;
    }
  });
  std::thread a(writer), b(writer);
  a.join();
  b.join();
  writing = false;
  reader.join();
  EXPECT_EQ(failures.load(), 0);
  auto ledger = std::move(Ledger::Open(path).value());
  auto runs = *ledger->ListRuns();
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].points + runs[1].points, 40);
  std::filesystem::remove(path);
}

// A study keeps its runs with their roles and the answer written at its end;
// a study that is not there is a NotFound naming it.
TEST(Ledger, AStudyKeepsItsRunsAndItsAnswer) {
  auto ledger = Ledger::Open(":memory:");
  ASSERT_TRUE(ledger.ok());
  auto study = (*ledger)->BeginStudy("tune", "goodput tune --target sim:h100");
  ASSERT_TRUE(study.ok()) << study.status().message();
  RunInfo info;
  info.command = "goodput tune";
  auto sim = (*ledger)->BeginRun(info);
  auto target = (*ledger)->BeginRun(info);
  ASSERT_TRUE((*ledger)->AddStudyRun(*study, *sim, "simulator").ok());
  ASSERT_TRUE((*ledger)->AddStudyRun(*study, *target, "target").ok());
  auto running = (*ledger)->GetStudy(*study);
  ASSERT_TRUE(running.ok());
  EXPECT_EQ(running->status, "running");
  EXPECT_EQ(running->summary, "");
  ASSERT_TRUE((*ledger)->FinishStudy(*study, "complete", R"({"recommendation": null})").ok());
  auto done = (*ledger)->GetStudy(*study);
  ASSERT_TRUE(done.ok());
  EXPECT_EQ(done->kind, "tune");
  EXPECT_EQ(done->command, "goodput tune --target sim:h100");
  EXPECT_EQ(done->status, "complete");
  EXPECT_EQ(done->summary, R"({"recommendation": null})");
  ASSERT_EQ(done->runs.size(), 2u);
  EXPECT_EQ(done->runs[0].run, *sim);
  EXPECT_EQ(done->runs[1].role, "target");
  EXPECT_EQ((*ledger)->ListStudies()->size(), 1u);
  auto missing = (*ledger)->GetStudy(7);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("no study 7"), std::string::npos);
  EXPECT_FALSE((*ledger)->AddStudyRun(*study, 999, "target").ok());  // no such run
}

TEST(Ledger, UnopenablePathIsAClearError) {
  auto ledger = Ledger::Open("/nonexistent-dir/x/goodput.db");
  ASSERT_FALSE(ledger.ok());
  EXPECT_NE(ledger.status().message().find("/nonexistent-dir/x/goodput.db"), std::string::npos);
}

}  // namespace
}  // namespace goodput
