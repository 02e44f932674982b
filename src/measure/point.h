// A load point: the runs of one load (its repetitions) summarised against the
// workload's SLOs. Attainment is pooled over the repetitions' measured
// requests and judged with a confidence interval: a class holds its SLO only
// when the interval's lower bound reaches the required share, fails when its
// upper bound is below it, and is undecided in between. Latency percentiles
// are pooled too; throughput and goodput are medians of the repetitions
// (their spread says how much runs differ).
#pragma once

#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "core/stats.h"
#include "measure/run.h"
#include "measure/saturation.h"
#include "workload/workload.h"

namespace goodput {

enum class Verdict { kHolds, kFails, kUndecided, kNoData };
const char* VerdictName(Verdict v);  // "holds", "fails", "undecided", "no data"

// The confidence of every verdict's interval (two-sided Wilson score).
constexpr double kVerdictConfidence = 0.95;

// The verdict on `good` of `total` requests against `required` (0.99 for a
// p99 SLO): holds when the Wilson lower bound >= required, fails when the
// upper bound < required, undecided otherwise; no data without requests. A
// p100 SLO cannot be shown with confidence: it holds while no request failed it.
Verdict JudgeAttainment(int64_t good, int64_t total, double required);

constexpr double kNoValue = std::numeric_limits<double>::quiet_NaN();

struct ClassAttainment {
  std::string class_name;
  bool has_slo = false;
  bool offline = false;      // an offline class of the workload (measured by its throughput)
  int64_t total = 0;         // measured requests, pooled over the repetitions
  int64_t good = 0;
  double attainment = kNoValue;  // good / total
  Interval interval;             // Wilson, kVerdictConfidence
  double required = 0;
  int64_t min_requests = 0;      // the fewest requests that can show `required` (MinTrialsToShow)
  Verdict verdict = Verdict::kHolds;  // classes without an SLO: kHolds
  double throughput = 0;         // output tokens served / s (median over repetitions)
  // How far inside its SLO the class is: the least, over its targets, of
  // 1 - (the metric at the target's percentile, pooled over the measured
  // successful requests) / threshold. Negative: a target is missed; NaN
  // without an SLO or a measured request.
  double slo_margin = kNoValue;
  std::string slo_worst;  // the target with that margin: "ttft p99 1.32 s (target 1 s)"
  // A windowed SLO (ClassSlo::window_s > 0): total, good, attainment, interval
  // and verdict above are the worst window's, each window pooled over the
  // repetitions (window k of every run together); the verdict holds only if
  // every window holds.
  double window_s = 0;
  std::vector<std::pair<int64_t, int64_t>> window_counts;  // (good, total) of each window judged, in order
  int worst_window = -1;                                   // the deciding one, 0 for the first
  int judged_window = -1;  // "over peak": the only window judged (the profile's busiest step); -1: all
  bool holds() const { return verdict == Verdict::kHolds; }
};

// The window that decided a windowed class, for people: "window 2 of 6
// (60-120 s into the measurement window)", and ", the peak step" when it was
// the only one judged; "" when none did.
std::string WindowText(const ClassAttainment& c);

// A latency over the measured successful requests, pooled over repetitions;
// NaN (and count 0) when none had it.
struct LatencyStats {
  double p50 = kNoValue, p90 = kNoValue, p99 = kNoValue, mean = kNoValue;
  int64_t count = 0;
  // 95% distribution-free intervals of the population's p50 and p99 (core's
  // PercentileInterval; an unbounded side is +-inf): what the sample can
  // tell apart, e.g. the simulator's figure from the engine's.
  Interval p50_interval{kNoValue, kNoValue}, p99_interval{kNoValue, kNoValue};
  // The distribution: the value at each of kDistributionPercentiles (the
  // report draws it as a CDF); empty without a sample or in older summaries.
  std::vector<std::pair<double, double>> distribution;  // (percentile, value)
};
// 0, 1, 5, 10, ..., 95, 99, 99.9, 100: enough to draw a CDF and its tail.
extern const std::vector<double> kDistributionPercentiles;
LatencyStats SummariseLatency(std::vector<double> values);

struct PointResult {
  ArrivalSpec load;
  std::string label;       // "32" (concurrency) or "4/s" (rate)
  int repeats = 0;
  // Medians over the repetitions (served rates: see core/slo.h).
  double throughput = 0;          // output tokens / s
  double request_rate = 0;        // completed requests / s
  double goodput = 0;             // good requests / s
  double goodput_tokens = 0;      // good output tokens / s
  double throughput_spread = 0;   // (max - min) / median over repetitions
  double per_request_speed = kNoValue;  // 1 / TPOT p50: tokens / s one user sees
  // Pooled over the measured successful requests of the classes with an SLO
  // (of every class when none has one).
  LatencyStats ttft, tpot, itl, e2e;
  double preemptions = 0;         // engine counters (preemptions: kNoValue where the target cannot see them)
  std::optional<SpecDecodeCounts> spec_decode;  // summed over the repetitions that had drafts
  std::optional<PrefixCacheCounts> prefix_cache;  // summed over the repetitions whose target saw it
  std::vector<ReplicaCounts> replicas;  // a fleet's instances, summed over the repetitions; empty for one engine
  double rejected = 0;
  double steps = 0;
  std::vector<ClassAttainment> classes;
  double slo_margin = kNoValue;   // the least of the classes' (NaN when none has one)
  Verdict verdict = Verdict::kHolds;  // fails if a class fails or the load is not sustainable; undecided if a
                                      // class is undecided or has no data
  Saturation saturation;              // an open load that outran the engine: its verdict fails, "not sustainable"
  // The measurement's own health (a load generator's; the simulator's are 0).
  double failed = 0;              // failed requests per run (median); they count against attainment
  std::string top_error;          // the most frequent failure reason, with its count
  // The share of the host's CPU time other processes took over the
  // repetitions (MeasuredRun::host_cpu); empty when simulated or too short to judge.
  std::optional<double> host_others_share;
  double send_lag_p99 = 0;        // the worst repetition's p99 of t_sent - t_arrival
  double usage_mismatch = 0;      // requests per run whose usage disagrees with the counted chunks
  std::vector<std::string> request_notes;  // the records' notes, each once: "text (N requests)"

  bool holds() const { return verdict == Verdict::kHolds; }
  // "not sustainable" for a saturated load, else VerdictName(verdict).
  const char* verdict_text() const { return saturation.saturated ? "not sustainable" : VerdictName(verdict); }
  // Successful measured requests behind the latencies (0: nothing to show).
  int64_t measured_ok() const { return e2e.count; }
};

// The summary of the runs of `load` (its repetitions).
PointResult Summarise(const Workload& workload, const ArrivalSpec& load, const std::vector<MeasuredRun>& runs);

// A fleet's busiest instance's requests over the mean (1 when balanced, or
// with no request or no fleet).
double ReplicaImbalance(const PointResult& p);

// "32" for a concurrency, "4/s" for a rate, "trace" or "batch" otherwise.
std::string LoadLabel(const ArrivalSpec& load);

}  // namespace goodput
