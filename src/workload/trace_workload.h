// A recorded trace (Azure LLM inference, BurstGPT, Mooncake, or a CSV with
// the columns trace.h names) turned into a workload file: `goodput workload
// from FILE`. The file replays the trace's arrivals and lengths as they were,
// and each class also carries the trace's length quantiles, which a `--rate`
// or `--concurrency` that replaces the trace's arrivals draws from. A dataset
// without arrival times (ShareGPT's conversations, a CSV of lengths) becomes
// a workload of its length quantiles alone.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/status.h"
#include "workload/trace.h"

namespace goodput {

struct LengthSummary {
  double mean = 0, p50 = 0, p90 = 0, p99 = 0;
  int64_t max = 0;
  double log_sigma = 0;  // standard deviation of log(length) over lengths > 0
  // The lengths as a LengthDistribution spec: their quantiles (p0, p1, p2.5,
  // p5, p10 ... p90, p95, p97.5, p99, p99.5, p99.9, p100; linear between),
  // so a long tail survives where a lognormal at the mean and spread would
  // not; "fixed:N" when every length is N.
  std::string spec;
};

struct ClassLengths {
  int64_t requests = 0;
  LengthSummary input, output;
};

struct TraceSummary {
  int64_t requests = 0;
  double span_s = 0;            // first to last arrival
  double mean_rate = 0;         // requests / s over the span
  double peak_minute_rate = 0;  // requests / s in the busiest whole minute (the span's mean when shorter)
  LengthSummary input, output;
  std::map<std::string, ClassLengths> classes;  // per class ("" when the trace names none)
  // Where the trace has block hashes (Mooncake): the share of all input
  // tokens in leading blocks an earlier request already sent, i.e. an
  // unbounded prefix cache's hit rate; negative without hashes.
  double prefix_reuse = -1;
};

// The figures of `rows` (at least one).
TraceSummary SummariseTrace(const std::vector<TraceRow>& rows);

// The workload file's text for the trace `s` summarises: `name`, the trace
// at `trace_path` (as the file will name it: relative paths resolve against
// the workload file's folder), one class per class the trace names
// ("default" when none) with its share and fitted lengths, and `slo` (a
// class SLO such as "ttft p99 <= 1s") on every class when not empty;
// `skip_empty` when the trace holds requests of zero length that the replay
// leaves out (ReadTrace's skip_empty).
std::string TraceWorkloadYaml(const TraceSummary& s, const std::string& trace_path, const std::string& name,
                              const std::string& slo, bool skip_empty = false);

// The workload file's text for a dataset of lengths without arrival times
// (`source` names it in the file's comment, `note` adds a comment line, e.g.
// how tokens were counted): the same classes and lengths, no arrivals of its
// own (a command's --rate or --concurrency gives them), and as many requests
// as the dataset holds, at most 1,000 (vLLM's benchmark's default).
std::string LengthsWorkloadYaml(const TraceSummary& s, const std::string& source, const std::string& name,
                                const std::string& slo, const std::string& note = "");

// Each class's arrivals per step of `step_s` seconds as rates (requests/s),
// whole steps from the first arrival only (a trace's part step at its end is
// left out). Errors: a trace shorter than one step, or longer than
// kMaxProfileSteps steps.
Result<std::map<std::string, std::vector<double>>> TraceRateProfile(const std::vector<TraceRow>& rows, double step_s);

// The workload file's text for a day profile of the trace (`profile`, from
// TraceRateProfile): `profile_step` and per class its rates and the trace's
// length quantiles; `source` names the trace in the file's comment.
std::string ProfileWorkloadYaml(const TraceSummary& s, const std::map<std::string, std::vector<double>>& profile,
                                double step_s, const std::string& source, const std::string& name,
                                const std::string& slo);

}  // namespace goodput
