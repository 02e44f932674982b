// A load point: the runs of one load (its repetitions) summarised against the
// workload's SLOs — medians of the figures, attainment per class, the
// verdict, and the measurement's own health.
#pragma once

#include <string>
#include <vector>

#include "measure/run.h"
#include "workload/workload.h"

namespace goodput {

struct ClassAttainment {
  std::string class_name;
  bool has_slo = false;
  double attainment = 0;  // median over repetitions
  double required = 0;
  bool holds = true;
};

struct PointResult {
  ArrivalSpec load;
  std::string label;       // "32" (concurrency) or "4.0/s" (rate)
  int repeats = 0;
  // Medians over the repetitions.
  double throughput = 0;          // output tokens / s
  double request_rate = 0;        // finished requests / s
  double per_request_speed = 0;   // 1 / median TPOT: tokens / s one user sees
  double ttft_p50 = 0, ttft_p99 = 0, tpot_p50 = 0, tpot_p99 = 0;
  double goodput = 0;             // good requests / s
  double goodput_tokens = 0;      // good output tokens / s
  double throughput_spread = 0;   // (max - min) / median over repetitions
  double preemptions = 0;         // engine counters (0 where the target cannot see them)
  double rejected = 0;
  double steps = 0;
  std::vector<ClassAttainment> classes;
  bool holds = true;              // every class with an SLO holds it (median attainment)
  // The measurement's own health (a load generator's; the simulator's are 0).
  double failed = 0;              // failed requests per run (median); they count against attainment
  std::string top_error;          // the most frequent failure reason, with its count
  double send_lag_p99 = 0;        // the worst repetition's p99 of t_sent - t_arrival
  double usage_mismatch = 0;      // requests per run whose usage disagrees with the counted chunks
  std::vector<std::string> request_notes;  // the records' notes, each once: "text (N requests)"
};

// The summary of the runs of `load` (its repetitions).
PointResult Summarise(const Workload& workload, const ArrivalSpec& load, const std::vector<MeasuredRun>& runs);

// "32" for a concurrency, "4/s" for a rate, "trace" for a replayed trace.
std::string LoadLabel(const ArrivalSpec& load);

}  // namespace goodput
