#include "ledger/merge.h"

#include <algorithm>
#include <cmath>
#include <set>

#include <fmt/format.h>

#include "core/text.h"
#include "measure/point.h"
#include "measure/run.h"
#include "workload/workload.h"

namespace goodput {
namespace {

// What the merge needs of one shard: its run, points and their requests.
struct Shard {
  StoredRun run;
  std::vector<StoredPoint> points;
  std::vector<std::vector<std::vector<RequestRecord>>> requests;  // per point, per repetition
};

Result<Shard> ReadShard(const ShardRun& s) {
  Shard out;
  GOODPUT_ASSIGN_OR_RETURN(out.run, s.ledger->GetRun(s.run));
  const std::string name = fmt::format("run {}", s.run);
  if (out.run.status != "complete") {
    return Status::InvalidArgument(fmt::format("{} is {}, not complete", name, out.run.status));
  }
  GOODPUT_ASSIGN_OR_RETURN(out.points, s.ledger->GetPoints(s.run));
  for (const StoredPoint& p : out.points) {
    GOODPUT_ASSIGN_OR_RETURN(auto reqs, s.ledger->GetRequests(p.id));
    if (reqs.empty()) {
      return Status::InvalidArgument(fmt::format("{} kept no requests (bench --shard keeps them)", name));
    }
    out.requests.push_back(std::move(reqs));
  }
  return out;
}

// Every shard i/N of one N, each i once; the same workload and points.
Status CheckShards(const std::vector<Shard>& shards) {
  std::set<int> seen;
  int n = 0;
  for (const Shard& s : shards) {
    auto label = ParseShard(s.run.info.shard);
    if (!label.ok()) return label.status().WithContext(fmt::format("run {} is no shard", s.run.id));
    if (n != 0 && label->second != n) {
      return Status::InvalidArgument(
          fmt::format("run {} is a shard of {}, the first of {}", s.run.id, label->second, n));
    }
    n = label->second;
    if (!seen.insert(label->first).second) {
      return Status::InvalidArgument(fmt::format("shard {}/{} is given twice", label->first, n));
    }
    const Shard& first = shards[0];
    if (s.run.info.workload_text != first.run.info.workload_text || s.run.info.slo != first.run.info.slo) {
      return Status::InvalidArgument(
          fmt::format("run {} ran another workload or SLO than run {}", s.run.id, first.run.id));
    }
    if (s.points.size() != first.points.size()) {
      return Status::InvalidArgument(
          fmt::format("run {} has {} points, run {} {}", s.run.id, s.points.size(), first.run.id, first.points.size()));
    }
    for (size_t k = 0; k < s.points.size(); ++k) {
      const StoredPoint &a = s.points[k], &b = first.points[k];
      if (a.setting != b.setting || a.summary.label != b.summary.label ||
          s.requests[k].size() != first.requests[k].size()) {
        return Status::InvalidArgument(fmt::format("run {}'s point {} ({} {}) is not run {}'s ({} {})", s.run.id, k + 1,
                                                   a.setting, a.summary.label, first.run.id, b.setting,
                                                   b.summary.label));
      }
    }
  }
  if (static_cast<int>(seen.size()) != n) {
    return Status::InvalidArgument(fmt::format("{} of the {} shards are given", seen.size(), n));
  }
  return Status::Ok();
}

// The engine's counters of one repetition, as its summary kept them.
EngineCounters CountersOf(const PointResult& rep) {
  EngineCounters c;
  c.steps = static_cast<int64_t>(rep.steps);
  if (std::isfinite(rep.preemptions)) c.preemptions = static_cast<int64_t>(rep.preemptions);
  c.rejected = static_cast<int64_t>(rep.rejected);
  c.spec_decode = rep.spec_decode;
  c.prefix_cache = rep.prefix_cache;
  c.replicas = rep.replicas;
  return c;
}

Result<Workload> WorkloadOf(const RunInfo& info) {
  auto w = ParseWorkload(info.workload_text, "the shards' workload", ".");
  if (!w.ok()) {
    return w.status().WithContext("merging reads the workload the shards ran (run it where its files are)");
  }
  if (!info.slo.empty() && info.slo != "none") {
    GOODPUT_ASSIGN_OR_RETURN(const SloSpec slo, ParseSlo(info.slo));
    GOODPUT_RETURN_IF_ERROR(ApplySlo(*w, slo));
  }
  return w;
}

}  // namespace

Result<std::pair<int, int>> ParseShard(const std::string& text) {
  // Not sscanf: its "%d" of a number past int's range is undefined (1/99999999999 was taken).
  const size_t slash = text.find('/');
  const std::string_view whole(text);
  const auto i = slash == std::string::npos ? std::nullopt : ParseWholeNumber(whole.substr(0, slash));
  const auto n = slash == std::string::npos ? std::nullopt : ParseWholeNumber(whole.substr(slash + 1));
  if (!i || !n || *n < 2 || *n > kMaxShards || *i < 0 || *i >= *n) {
    return Status::InvalidArgument(
        fmt::format("'{}' is not a shard I/N with 2 <= N <= {} and 0 <= I < N", text, kMaxShards));
  }
  return std::pair{static_cast<int>(*i), static_cast<int>(*n)};
}

Result<int64_t> MergeShards(const std::vector<ShardRun>& given, Ledger& into, const std::string& command) {
  if (given.size() < 2) return Status::InvalidArgument("merging needs at least two shards");
  std::vector<Shard> shards;
  for (const ShardRun& s : given) {
    auto shard = ReadShard(s);
    if (!shard.ok()) return shard.status();
    shards.push_back(std::move(*shard));
  }
  GOODPUT_RETURN_IF_ERROR(CheckShards(shards));
  GOODPUT_ASSIGN_OR_RETURN(const Workload w, WorkloadOf(shards[0].run.info));
  RunInfo info = shards[0].run.info;
  info.command = command;
  info.shard.clear();
  GOODPUT_ASSIGN_OR_RETURN(const int64_t run, into.BeginRun(info));
  for (size_t k = 0; k < shards[0].points.size(); ++k) {
    const StoredPoint& first = shards[0].points[k];
    std::vector<MeasuredRun> runs;
    std::vector<PointResult> reps;
    std::vector<std::vector<RequestRecord>> records;
    for (size_t r = 0; r < shards[0].requests[k].size(); ++r) {
      MeasuredRun m;
      for (const Shard& s : shards) m.records.insert(m.records.end(), s.requests[k][r].begin(), s.requests[k][r].end());
      std::stable_sort(m.records.begin(), m.records.end(),
                       [](const RequestRecord& a, const RequestRecord& b) { return a.t_arrival < b.t_arrival; });
      m.window = MeasurementWindow(w, m.records);
      if (r < first.repetitions.size()) m.engine = CountersOf(first.repetitions[r]);
      reps.push_back(Summarise(w, first.summary.load, {m}));
      records.push_back(m.records);
      runs.push_back(std::move(m));
    }
    const PointResult merged = Summarise(w, first.summary.load, runs);
    int64_t per_run = 0;
    for (const Shard& s : shards) per_run += s.points[k].requests_per_run;
    GOODPUT_RETURN_IF_ERROR(into.AddPoint(run, first.setting, merged, per_run, reps, records));
  }
  GOODPUT_RETURN_IF_ERROR(into.FinishRun(run, "complete"));
  return run;
}

}  // namespace goodput
