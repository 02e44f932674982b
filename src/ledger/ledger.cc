#include "ledger/ledger.h"

#include <chrono>
#include <stdexcept>
#include <thread>

#include <SQLiteCpp/SQLiteCpp.h>
#include <sqlite3.h>
#include <boost/json.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/host.h"
#include "measure/point_json.h"

namespace goodput {
namespace {

constexpr const char* kSchema = R"(
CREATE TABLE IF NOT EXISTS runs (
  id INTEGER PRIMARY KEY,
  started_at TEXT NOT NULL DEFAULT (datetime('now')),
  finished_at TEXT,
  status TEXT NOT NULL DEFAULT 'running',
  command TEXT, target TEXT, model TEXT, hardware TEXT, workload_name TEXT, workload TEXT,
  slo TEXT, version TEXT, host TEXT, owner TEXT, shard TEXT);
CREATE TABLE IF NOT EXISTS points (
  id INTEGER PRIMARY KEY,
  run_id INTEGER NOT NULL REFERENCES runs(id),
  setting TEXT NOT NULL,
  load_label TEXT NOT NULL, arrival TEXT NOT NULL, concurrency INTEGER, rate REAL,
  repeats INTEGER, requests_per_run INTEGER,
  throughput REAL, goodput REAL, ttft_p50 REAL, ttft_p99 REAL, tpot_p50 REAL, tpot_p99 REAL,
  throughput_spread REAL, failed REAL, send_lag_p99 REAL, usage_mismatch REAL, holds INTEGER,
  summary TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS repetitions (
  point_id INTEGER NOT NULL REFERENCES points(id),
  repetition INTEGER NOT NULL,
  throughput REAL, goodput REAL, ttft_p99 REAL, tpot_p99 REAL, failed REAL, send_lag_p99 REAL, holds INTEGER,
  summary TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS requests (
  point_id INTEGER NOT NULL REFERENCES points(id),
  repetition INTEGER NOT NULL,
  class TEXT, t_arrival REAL, t_sent REAL, t_first REAL, t_last REAL, n_in INTEGER, n_out INTEGER,
  ok INTEGER, error TEXT, chunks TEXT, first_wave TEXT);
CREATE TABLE IF NOT EXISTS studies (
  id INTEGER PRIMARY KEY,
  started_at TEXT NOT NULL DEFAULT (datetime('now')),
  finished_at TEXT,
  status TEXT NOT NULL DEFAULT 'running',
  kind TEXT NOT NULL, command TEXT, summary TEXT, owner TEXT);
CREATE TABLE IF NOT EXISTS study_runs (
  study_id INTEGER NOT NULL REFERENCES studies(id),
  run_id INTEGER NOT NULL REFERENCES runs(id),
  role TEXT NOT NULL);
)";

template <typename F>
Status Guard(const char* what, F&& f) {
  try {
    f();
    return Status::Ok();
  } catch (const std::exception& e) {
    return Status::IoError(std::string("ledger: ") + what + ": " + e.what());
  }
}

std::string Json(const PointResult& p) {
  boost::json::value v = PointToJson(p);
  return boost::json::serialize(v);
}

void BindOptional(SQLite::Statement& s, int i, const std::optional<double>& v) {
  if (v) s.bind(i, *v);
  else s.bind(i);
}

PointResult PointFrom(SQLite::Statement& q) {
  PointResult p;
  p.label = q.getColumn("load_label").getString();
  p.load.kind = ArrivalKindFromName(q.getColumn("arrival").getString()).value_or(ArrivalKind::kPoisson);
  p.load.concurrency = q.getColumn("concurrency").getInt();
  p.load.rate = q.getColumn("rate").getDouble();
  p.repeats = q.getColumn("repeats").getInt();
  p.throughput = q.getColumn("throughput").getDouble();
  p.goodput = q.getColumn("goodput").getDouble();
  p.ttft.p50 = q.getColumn("ttft_p50").getDouble();
  p.ttft.p99 = q.getColumn("ttft_p99").getDouble();
  p.tpot.p50 = q.getColumn("tpot_p50").getDouble();
  p.tpot.p99 = q.getColumn("tpot_p99").getDouble();
  p.throughput_spread = q.getColumn("throughput_spread").getDouble();
  p.failed = q.getColumn("failed").getDouble();
  p.send_lag_p99 = q.getColumn("send_lag_p99").getDouble();
  p.usage_mismatch = q.getColumn("usage_mismatch").getDouble();
  p.verdict = q.getColumn("holds").getInt() != 0 ? Verdict::kHolds : Verdict::kFails;
  p.per_request_speed = p.tpot.p50 > 0 ? 1.0 / p.tpot.p50 : kNoValue;  // as Summarise derives it
  return p;
}

// Switches the file to WAL once (the mode persists). The switch needs the
// file to itself and SQLite does not wait for that (no busy handler), so a
// ledger being created by two processes at once retries for up to 10 s.
void UseWal(SQLite::Database& db) {
  for (int attempt = 0;; ++attempt) {
    try {
      if (db.execAndGet("PRAGMA journal_mode").getString() == "wal") return;
      if (db.execAndGet("PRAGMA journal_mode = WAL").getString() == "wal") return;
    } catch (const SQLite::Exception& e) {
      if (e.getErrorCode() != SQLITE_BUSY || attempt >= 200) throw;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

// Another program's SQLite database is refused before anything is written to
// it (the WAL switch and the schema would both change it): a file with
// tables of which none is a ledger's runs table (started_at, status, command).
void RefuseForeignDatabase(SQLite::Database& db) {
  std::vector<std::string> tables;
  SQLite::Statement q(db, "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'");
  while (q.executeStep()) tables.push_back(q.getColumn(0).getString());
  if (tables.empty()) return;  // new, or emptied: the schema makes it a ledger
  SQLite::Statement runs(db,
                         "SELECT COUNT(*) FROM pragma_table_info('runs') WHERE name IN ('started_at', 'status', "
                         "'command')");
  if (runs.executeStep() && runs.getColumn(0).getInt() == 3) return;
  throw std::runtime_error(
      fmt::format("not a goodput ledger: an SQLite database of other tables ({}); give --ledger another file",
                  fmt::join(tables, ", ")));
}

// Ledgers written before a column existed get it (empty in their rows).
void AddColumnIfMissing(SQLite::Database& db, const std::string& table, const std::string& column) {
  bool missing = false;
  {  // the query ends before the schema changes
    SQLite::Statement q(db, "SELECT COUNT(*) FROM pragma_table_info(?) WHERE name = ?");
    q.bind(1, table);
    q.bind(2, column);
    missing = q.executeStep() && q.getColumn(0).getInt() == 0;
  }
  if (!missing) return;
  try {
    db.exec("ALTER TABLE " + table + " ADD COLUMN " + column + " TEXT");
  } catch (const SQLite::Exception& e) {
    // Another process opening the same old ledger added it first.
    if (std::string(e.what()).find("duplicate column") == std::string::npos) throw;
  }
}

// A run or study still marked running whose process is gone (killed, or its
// machine rebooted) did not finish: it reads as interrupted.
std::string StatusSeen(const std::string& status, const std::string& owner) {
  return status == "running" && !owner.empty() && !OwnerIsAlive(owner) ? "interrupted" : status;
}

// A row of `repetitions`: its stored summary, or the columns when that
// cannot be read.
PointResult RepetitionFrom(SQLite::Statement& r) {
  if (auto full = PointFromJson(r.getColumn(7).getString()); full.ok()) return *std::move(full);
  PointResult q;
  q.throughput = r.getColumn(0).getDouble();
  q.goodput = r.getColumn(1).getDouble();
  q.ttft.p99 = r.getColumn(2).getDouble();
  q.tpot.p99 = r.getColumn(3).getDouble();
  q.failed = r.getColumn(4).getDouble();
  q.send_lag_p99 = r.getColumn(5).getDouble();
  q.verdict = r.getColumn(6).getInt() != 0 ? Verdict::kHolds : Verdict::kFails;
  return q;
}

}  // namespace

Ledger::Ledger(std::unique_ptr<SQLite::Database> db) : db_(std::move(db)) {}
Ledger::~Ledger() = default;

Result<std::unique_ptr<Ledger>> Ledger::Open(const std::string& path) {
  std::unique_ptr<SQLite::Database> db;
  Status st = Guard("open", [&] {
    db = std::make_unique<SQLite::Database>(path, SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
    // Several sweeps and readers may share one ledger: writers wait for each
    // other instead of failing with "database is locked", and WAL lets
    // readers read while a point is being written.
    db->setBusyTimeout(30000);
    RefuseForeignDatabase(*db);
    if (path != ":memory:") UseWal(*db);
    db->exec("PRAGMA foreign_keys = ON");
    db->exec(kSchema);
    for (const char* table : {"runs", "studies"}) AddColumnIfMissing(*db, table, "owner");
    AddColumnIfMissing(*db, "runs", "shard");
    AddColumnIfMissing(*db, "requests", "chunks");      // "t:n t:n ...": the token-carrying chunks
    AddColumnIfMissing(*db, "requests", "first_wave");  // 1 for a closed-loop client's first request
  });
  if (!st.ok()) return st.WithContext(path);
  return std::unique_ptr<Ledger>(new Ledger(std::move(db)));
}

Result<int64_t> Ledger::BeginRun(const RunInfo& i) {
  int64_t id = 0;
  GOODPUT_RETURN_IF_ERROR(Guard("begin run", [&] {
    SQLite::Statement s(*db_,
                        "INSERT INTO runs (command, target, model, hardware, workload_name, workload, slo, version, "
                        "host, owner, shard) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
    int k = 1;
    const std::string owner = ProcessOwner();
    for (const std::string* v : {&i.command, &i.target, &i.model, &i.hardware, &i.workload_name, &i.workload_text,
                                 &i.slo, &i.version, &i.host, &owner, &i.shard}) {
      s.bind(k++, *v);
    }
    s.exec();
    id = db_->getLastInsertRowid();
  }));
  return id;
}

Status Ledger::AddPoint(int64_t run, const std::string& setting, const PointResult& p, int64_t requests_per_run,
                        const std::vector<PointResult>& repetitions,
                        const std::vector<std::vector<RequestRecord>>& records) {
  return Guard("add point", [&] {
    SQLite::Transaction tx(*db_);
    SQLite::Statement s(*db_,
                        "INSERT INTO points (run_id, setting, load_label, arrival, concurrency, rate, repeats, "
                        "requests_per_run, throughput, goodput, ttft_p50, ttft_p99, tpot_p50, tpot_p99, "
                        "throughput_spread, failed, send_lag_p99, usage_mismatch, holds, summary) "
                        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
    s.bind(1, run);
    s.bind(2, setting);
    s.bind(3, p.label);
    s.bind(4, ArrivalKindName(p.load.kind));
    s.bind(5, p.load.concurrency);
    s.bind(6, p.load.rate);
    s.bind(7, p.repeats);
    s.bind(8, requests_per_run);
    int k = 9;
    for (double v : {p.throughput, p.goodput, p.ttft.p50, p.ttft.p99, p.tpot.p50, p.tpot.p99, p.throughput_spread,
                     p.failed, p.send_lag_p99, p.usage_mismatch}) {
      s.bind(k++, v);
    }
    s.bind(19, p.holds() ? 1 : 0);
    s.bind(20, Json(p));
    s.exec();
    const int64_t point = db_->getLastInsertRowid();
    SQLite::Statement r(*db_,
                        "INSERT INTO repetitions (point_id, repetition, throughput, goodput, ttft_p99, tpot_p99, "
                        "failed, send_lag_p99, holds, summary) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
    for (size_t i = 0; i < repetitions.size(); ++i) {
      const PointResult& q = repetitions[i];
      r.reset();
      r.bind(1, point);
      r.bind(2, static_cast<int64_t>(i + 1));
      int j = 3;
      for (double v : {q.throughput, q.goodput, q.ttft.p99, q.tpot.p99, q.failed, q.send_lag_p99}) r.bind(j++, v);
      r.bind(9, q.holds() ? 1 : 0);
      r.bind(10, Json(q));
      r.exec();
    }
    SQLite::Statement rq(*db_,
                         "INSERT INTO requests (point_id, repetition, class, t_arrival, t_sent, t_first, t_last, n_in, "
                         "n_out, ok, error, chunks, first_wave) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
    for (size_t i = 0; i < records.size(); ++i) {
      for (const RequestRecord& rec : records[i]) {
        rq.reset();
        rq.bind(1, point);
        rq.bind(2, static_cast<int64_t>(i + 1));
        rq.bind(3, rec.request_class);
        rq.bind(4, rec.t_arrival);
        rq.bind(5, rec.t_sent);
        BindOptional(rq, 6, rec.t_first);
        BindOptional(rq, 7, rec.t_last);
        rq.bind(8, rec.n_in);
        rq.bind(9, rec.n_out);
        rq.bind(10, rec.ok ? 1 : 0);
        rq.bind(11, rec.error);
        rq.bind(12, ChunksToText(rec.chunks));
        rq.bind(13, rec.first_wave ? 1 : 0);
        rq.exec();
      }
    }
    tx.commit();
  });
}

Status Ledger::FinishRun(int64_t run, const std::string& status) {
  return Guard("finish run", [&] {
    SQLite::Statement s(*db_, "UPDATE runs SET status = ?, finished_at = datetime('now') WHERE id = ?");
    s.bind(1, status);
    s.bind(2, run);
    s.exec();
  });
}

Result<std::vector<StoredRun>> Ledger::SelectRuns(std::optional<int64_t> only) {
  std::vector<StoredRun> out;
  GOODPUT_RETURN_IF_ERROR(Guard("read runs", [&] {
    SQLite::Statement q(
        *db_,
        "SELECT r.id, r.started_at, COALESCE(r.finished_at, ''), r.status, r.command, r.target, r.model, "
        "r.hardware, r.workload_name, r.workload, r.slo, r.version, r.host, "
        "(SELECT COUNT(*) FROM points p WHERE p.run_id = r.id), COALESCE(r.owner, ''), COALESCE(r.shard, '') "
        "FROM runs r "
        "WHERE ?1 IS NULL OR r.id = ?1 ORDER BY r.id");
    if (only) q.bind(1, *only);
    while (q.executeStep()) {
      StoredRun r;
      r.id = q.getColumn(0).getInt64();
      r.started_at = q.getColumn(1).getString();
      r.finished_at = q.getColumn(2).getString();
      r.status = q.getColumn(3).getString();
      int c = 4;
      for (std::string* field : {&r.info.command, &r.info.target, &r.info.model, &r.info.hardware,
                                 &r.info.workload_name, &r.info.workload_text, &r.info.slo, &r.info.version,
                                 &r.info.host}) {
        *field = q.getColumn(c++).getString();
      }
      r.points = q.getColumn(c).getInt64();
      r.status = StatusSeen(r.status, q.getColumn(c + 1).getString());
      r.info.shard = q.getColumn(c + 2).getString();
      out.push_back(std::move(r));
    }
  }));
  return out;
}

Result<std::vector<StoredRun>> Ledger::ListRuns() { return SelectRuns(std::nullopt); }

Result<StoredRun> Ledger::GetRun(int64_t run) {
  GOODPUT_ASSIGN_OR_RETURN(std::vector<StoredRun> runs, SelectRuns(run));
  if (runs.empty()) {
    return Status::NotFound("no run " + std::to_string(run) + " in the ledger (goodput ledger list shows them)");
  }
  return std::move(runs.front());
}

Result<std::vector<StoredPoint>> Ledger::GetPoints(int64_t run) {
  std::vector<StoredPoint> out;
  GOODPUT_RETURN_IF_ERROR(Guard("read points", [&] {
    // By setting (in the order first measured), then by load: a capacity
    // search measures its loads out of order.
    SQLite::Statement q(*db_,
                        "SELECT p.* FROM points p JOIN (SELECT setting, MIN(id) AS first FROM points WHERE run_id = ? "
                        "GROUP BY setting) s ON s.setting = p.setting WHERE p.run_id = ? "
                        "ORDER BY s.first, p.concurrency, p.rate, p.id");
    q.bind(1, run);
    q.bind(2, run);
    while (q.executeStep()) {
      StoredPoint p;
      p.id = q.getColumn("id").getInt64();
      p.setting = q.getColumn("setting").getString();
      p.requests_per_run = q.getColumn("requests_per_run").getInt64();
      p.summary_json = q.getColumn("summary").getString();
      // The stored summary has every figure; the columns are its searchable
      // part and what is left when the summary cannot be read.
      if (auto full = PointFromJson(p.summary_json); full.ok()) {
        p.summary = std::move(*full);
      } else {
        p.summary = PointFrom(q);
        p.summary_error = full.status().message();
      }
      out.push_back(std::move(p));
    }
    SQLite::Statement r(*db_, "SELECT throughput, goodput, ttft_p99, tpot_p99, failed, send_lag_p99, holds, summary "
                              "FROM repetitions WHERE point_id = ? ORDER BY repetition");
    for (StoredPoint& p : out) {
      r.reset();
      r.bind(1, p.id);
      while (r.executeStep()) p.repetitions.push_back(RepetitionFrom(r));
    }
  }));
  return out;
}

Result<int64_t> Ledger::CountRequests(int64_t run) {
  int64_t n = 0;
  GOODPUT_RETURN_IF_ERROR(Guard("count requests", [&] {
    SQLite::Statement q(*db_,
                        "SELECT COUNT(*) FROM requests WHERE point_id IN (SELECT id FROM points WHERE run_id = ?)");
    q.bind(1, run);
    if (q.executeStep()) n = q.getColumn(0).getInt64();
  }));
  return n;
}

Result<std::vector<std::vector<RequestRecord>>> Ledger::GetRequests(int64_t point) {
  std::vector<std::vector<RequestRecord>> out;
  GOODPUT_RETURN_IF_ERROR(Guard("read requests", [&] {
    SQLite::Statement q(*db_,
                        "SELECT repetition, class, t_arrival, t_sent, t_first, t_last, n_in, n_out, ok, error, "
                        "COALESCE(chunks, ''), COALESCE(first_wave, 0) FROM requests WHERE point_id = ? "
                        "ORDER BY repetition, rowid");
    q.bind(1, point);
    while (q.executeStep()) {
      const auto repetition = static_cast<size_t>(std::max<int64_t>(1, q.getColumn(0).getInt64()));
      if (out.size() < repetition) out.resize(repetition);
      RequestRecord r;
      r.request_class = q.getColumn(1).getString();
      r.t_arrival = q.getColumn(2).getDouble();
      r.t_sent = q.getColumn(3).getDouble();
      if (!q.getColumn(4).isNull()) r.t_first = q.getColumn(4).getDouble();
      if (!q.getColumn(5).isNull()) r.t_last = q.getColumn(5).getDouble();
      r.n_in = q.getColumn(6).getInt64();
      r.n_out = q.getColumn(7).getInt64();
      r.ok = q.getColumn(8).getInt() != 0;
      r.error = q.getColumn(9).getString();
      r.chunks = ChunksFromText(q.getColumn(10).getString());
      r.first_wave = q.getColumn(11).getInt() != 0;
      out[repetition - 1].push_back(std::move(r));
    }
  }));
  return out;
}

Result<int64_t> Ledger::BeginStudy(const std::string& kind, const std::string& command) {
  int64_t id = 0;
  GOODPUT_RETURN_IF_ERROR(Guard("begin study", [&] {
    SQLite::Statement s(*db_, "INSERT INTO studies (kind, command, owner) VALUES (?, ?, ?)");
    s.bind(1, kind);
    s.bind(2, command);
    s.bind(3, ProcessOwner());
    s.exec();
    id = db_->getLastInsertRowid();
  }));
  return id;
}

Status Ledger::AddStudyRun(int64_t study, int64_t run, const std::string& role) {
  return Guard("add a run to a study", [&] {
    SQLite::Statement s(*db_, "INSERT INTO study_runs (study_id, run_id, role) VALUES (?, ?, ?)");
    s.bind(1, study);
    s.bind(2, run);
    s.bind(3, role);
    s.exec();
  });
}

Status Ledger::FinishStudy(int64_t study, const std::string& status, const std::string& summary_json) {
  return Guard("finish study", [&] {
    SQLite::Statement s(*db_, "UPDATE studies SET status = ?, summary = ?, finished_at = datetime('now') WHERE id = ?");
    s.bind(1, status);
    s.bind(2, summary_json);
    s.bind(3, study);
    s.exec();
  });
}

Result<std::vector<StoredStudy>> Ledger::SelectStudies(std::optional<int64_t> only) {
  std::vector<StoredStudy> out;
  GOODPUT_RETURN_IF_ERROR(Guard("read studies", [&] {
    SQLite::Statement q(*db_, "SELECT id, started_at, COALESCE(finished_at, ''), status, kind, COALESCE(command, ''), "
                              "COALESCE(summary, ''), COALESCE(owner, '') FROM studies WHERE ?1 IS NULL OR id = ?1 "
                              "ORDER BY id");
    if (only) q.bind(1, *only);
    while (q.executeStep()) {
      StoredStudy s;
      s.id = q.getColumn(0).getInt64();
      int c = 1;
      for (std::string* field : {&s.started_at, &s.finished_at, &s.status, &s.kind, &s.command, &s.summary}) {
        *field = q.getColumn(c++).getString();
      }
      s.status = StatusSeen(s.status, q.getColumn(c).getString());
      out.push_back(std::move(s));
    }
    SQLite::Statement r(*db_, "SELECT run_id, role FROM study_runs WHERE study_id = ? ORDER BY rowid");
    for (StoredStudy& s : out) {
      r.reset();
      r.bind(1, s.id);
      while (r.executeStep()) s.runs.push_back(StudyRun{r.getColumn(0).getInt64(), r.getColumn(1).getString()});
    }
  }));
  return out;
}

Result<std::vector<StoredStudy>> Ledger::ListStudies() { return SelectStudies(std::nullopt); }

Result<StoredStudy> Ledger::GetStudy(int64_t study) {
  GOODPUT_ASSIGN_OR_RETURN(std::vector<StoredStudy> studies, SelectStudies(study));
  if (studies.empty()) {
    return Status::NotFound("no study " + std::to_string(study) + " in the ledger (goodput ledger studies lists them)");
  }
  return std::move(studies.front());
}

Status RecordPoint(Ledger& ledger, int64_t run, const std::string& setting, const Workload& w,
                   const PointResult& point, const std::vector<MeasuredRun>& runs, bool save_requests) {
  std::vector<PointResult> reps;
  std::vector<std::vector<RequestRecord>> records;
  for (const MeasuredRun& r : runs) {
    reps.push_back(Summarise(w, point.load, {r}));
    if (save_requests) records.push_back(r.records);
  }
  return ledger.AddPoint(run, setting, point, w.requests, reps, records);
}

}  // namespace goodput
