// The ledger: every measurement run lands in an SQLite file (docs/architecture.md, seam
// 7; ":memory:" gives the in-memory ledger tests use). A run row is written
// first (status "running"); each completed load point is committed in its own
// transaction with its per-repetition figures, so a killed sweep keeps every
// point it finished; the run is then marked "complete" or "interrupted".
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/request_record.h"
#include "core/status.h"
#include "measure/point.h"
#include "measure/run.h"

namespace SQLite {
class Database;
}

namespace goodput {

// What a run measured and how, for whoever reads it later.
struct RunInfo {
  std::string command;        // the command line
  std::string target;         // Target::Describe()
  std::string model;
  std::string hardware;       // the host's CPU, or the simulated GPU
  std::string workload_name;
  std::string workload_text;  // the workload file as given
  std::string slo;
  std::string version;        // goodput's
  std::string host;
  std::string shard;  // "i/N": one of N client processes' share of one load (bench --shard); "" for all
};

struct StoredRun {
  int64_t id = 0;
  std::string started_at, finished_at, status;  // status: running | complete | interrupted | failed
  RunInfo info;
  int64_t points = 0;
};

// One load point as stored: the summary and its repetitions' own summaries.
struct StoredPoint {
  int64_t id = 0;
  std::string setting;     // "" or "max-num-seqs=16"
  PointResult summary;     // figures the quotability rules read are restored
  int64_t requests_per_run = 0;
  std::string summary_json;
  std::string summary_error;  // why summary_json could not be read ("" when it was); summary then has the columns
  std::vector<PointResult> repetitions;
};

// A study: several runs made by one command to answer one question (goodput
// tune: the simulator's search and the target's confirmations), with the
// command's answer stored as JSON.
struct StudyRun {
  int64_t run = 0;
  std::string role;  // "simulator", "target"
};
struct StoredStudy {
  int64_t id = 0;
  std::string started_at, finished_at, status;  // status: running | complete | interrupted | failed
  std::string kind;     // "tune"
  std::string command;
  std::string summary;  // the command's answer as JSON ("" until finished)
  std::vector<StudyRun> runs;
};

class Ledger {
 public:
  // Opens (creating when missing) the ledger at `path`; ":memory:" for one in memory.
  static Result<std::unique_ptr<Ledger>> Open(const std::string& path);
  ~Ledger();

  Result<int64_t> BeginRun(const RunInfo& info);
  // Stores one completed point in one transaction. `records` (one list per
  // repetition) are stored when non-empty.
  Status AddPoint(int64_t run, const std::string& setting, const PointResult& point, int64_t requests_per_run,
                  const std::vector<PointResult>& repetitions,
                  const std::vector<std::vector<RequestRecord>>& records);
  Status FinishRun(int64_t run, const std::string& status);

  Result<std::vector<StoredRun>> ListRuns();
  Result<StoredRun> GetRun(int64_t run);
  Result<std::vector<StoredPoint>> GetPoints(int64_t run);
  Result<int64_t> CountRequests(int64_t run);
  // The requests stored with point `point` (StoredPoint::id), one list per
  // repetition in order, each in stored order; empty when none were kept.
  Result<std::vector<std::vector<RequestRecord>>> GetRequests(int64_t point);

  // Studies (ledger/study.cc): begun "running", runs attached as they
  // start, finished with a status and the answer.
  Result<int64_t> BeginStudy(const std::string& kind, const std::string& command);
  Status AddStudyRun(int64_t study, int64_t run, const std::string& role);
  Status FinishStudy(int64_t study, const std::string& status, const std::string& summary_json);
  Result<std::vector<StoredStudy>> ListStudies();
  Result<StoredStudy> GetStudy(int64_t study);  // NotFound names the study

 private:
  explicit Ledger(std::unique_ptr<SQLite::Database> db);
  Result<std::vector<StoredRun>> SelectRuns(std::optional<int64_t> only);  // every run, or one
  Result<std::vector<StoredStudy>> SelectStudies(std::optional<int64_t> only);
  std::unique_ptr<SQLite::Database> db_;
};

// Stores a measured point of `run` with each repetition's own summary (and,
// when `save_requests`, every request): the measurement's on_point hook.
Status RecordPoint(Ledger& ledger, int64_t run, const std::string& setting, const Workload& workload,
                   const PointResult& point, const std::vector<MeasuredRun>& runs, bool save_requests);

}  // namespace goodput
