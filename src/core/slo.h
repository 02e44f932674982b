// Latency objectives (SLOs), attainment and goodput: docs/metrics.md.
//
// Syntax, one clause per class separated by ';':
//   "interactive: ttft p99 <= 1s, tpot p99 <= 100ms; batch: e2e p90 <= 10min"
// A clause without "name:" applies to every class that has no clause of its
// own (written "*"). Metrics: ttft, tpot, itl, e2e. Operators: <= or <. A
// clause may end with a window, "interactive: ttft p99 <= 1s over 5m": the
// class then holds only if it holds in every 5-minute window of the run.
//
// A request is good when it succeeded and meets every target of its class:
// its own TTFT / TPOT / E2E value is within the threshold; for ITL its worst
// inter-token gap is. A target whose metric a request does not have (TPOT of a
// one-token answer, ITL without chunk times) does not count against it. A
// failed, timed-out or truncated request is never good and stays in the
// denominator. Attainment = good / total. A class holds its SLO when its
// attainment is at least the highest percentile its targets name (p99 -> 0.99).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/request_record.h"
#include "core/status.h"

namespace goodput {

enum class SloMetric { kTtft, kTpot, kItl, kE2e };
const char* SloMetricName(SloMetric m);

struct SloTarget {
  SloMetric metric = SloMetric::kTtft;
  double percentile = 99;  // in (0, 100]
  double threshold_s = 0;  // seconds
  bool strict = false;     // '<' instead of '<='

  bool Met(double value) const { return strict ? value < threshold_s : value <= threshold_s; }
};

struct ClassSlo {
  std::string class_name;  // "*" for the default clause
  std::vector<SloTarget> targets;
  // > 0 ("... over 5m"): the class is judged in each consecutive window of
  // this many seconds of the measurement window, and the worst one decides.
  double window_s = 0;
  // "... over peak": judged in one window, a day profile's busiest step
  // (workload/day_profile.h); window_s stays 0.
  bool peak = false;

  // The attainment the class must reach: its highest percentile / 100.
  double RequiredAttainment() const;
};

struct SloSpec {
  std::vector<ClassSlo> classes;

  // The clause for `class_name`, else the "*" clause, else nullptr (a class
  // without an SLO, e.g. offline).
  const ClassSlo* For(const std::string& class_name) const;
  bool empty() const { return classes.empty(); }
  std::string ToString() const;  // canonical text, parseable again
};

// Parses the syntax above. Errors name the offending clause.
Result<SloSpec> ParseSlo(std::string_view text);

// A record's value of `m` as its SLO target judges it (for ITL its worst
// gap); empty when the record has none (TPOT of a one-token answer).
std::optional<double> SloMetricValue(const RequestRecord& r, SloMetric m);

// Whether one record is good under `slo` (nullptr: no SLO; then good == ok).
bool IsGood(const RequestRecord& r, const ClassSlo* slo);

// The measurement window: requests that arrive in [start, end) count.
struct Window {
  double start = 0;
  double end = 0;
  double seconds() const { return end - start; }
};

struct TargetReport {
  SloTarget target;
  std::optional<double> value;  // the metric at the target's percentile, over requests that have it
  int64_t applicable = 0;       // requests that have the metric
  int64_t met = 0;              // of those, how many met the threshold
};

struct ClassReport {
  std::string class_name;
  bool has_slo = false;
  int64_t total = 0;      // requests that arrived in the window
  int64_t failed = 0;     // of those, failed / timed out / truncated
  int64_t good = 0;
  // What the server delivered during the window, whenever the requests arrived
  // (served, not offered: under overload the backlog is not counted).
  double output_tokens = 0;       // tokens delivered in the window
  int64_t completed = 0;          // successful requests whose last token came in the window
  // Of the judged requests that succeeded, the share that were good (and the
  // share of their output tokens): goodput is the served rate times these, so
  // it counts goodness over exactly the requests attainment judges (a closed
  // loop's first wave, served in the window but not judged, neither adds to it
  // nor takes from it). 0 when no judged request succeeded.
  double good_share = 0;
  double good_token_share = 0;
  std::optional<double> attainment;  // good / total; empty when total == 0
  double required = 0;               // the attainment the SLO asks for
  bool holds = true;                 // attainment >= required (vacuous without SLO or requests)
  std::vector<TargetReport> targets;
};

struct SloReport {
  Window window;
  std::vector<ClassReport> classes;   // sorted by class name
  int64_t total = 0;
  int64_t good = 0;
  // Served rates over the window: completions and tokens delivered in it.
  double request_throughput = 0;      // completed requests / s
  double output_throughput = 0;       // output tokens delivered / s
  double goodput = 0;                 // per class: completed requests / s x good_share, summed
  double goodput_tokens = 0;          // per class: output tokens / s x good_token_share, summed
  bool all_hold = true;               // every class with an SLO holds it
};

// Attainment over the records that arrived within `window`; served rates
// (throughput) over what all records delivered within it, and goodput as
// those rates times the judged requests' good shares. The window's length
// must be > 0.
SloReport Evaluate(const std::vector<RequestRecord>& records, const SloSpec& slo, Window window);

// The whole window plus consecutive sub-windows of `width` seconds (the last
// one may be shorter); `worst` indexes the sub-window whose weakest SLO class
// has the lowest attainment margin (attainment - required).
struct WindowedReport {
  SloReport whole;
  std::vector<SloReport> windows;
  size_t worst = 0;
};
WindowedReport EvaluateWindows(const std::vector<RequestRecord>& records, const SloSpec& slo,
                               Window window, double width);

}  // namespace goodput
