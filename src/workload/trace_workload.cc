#include "workload/trace_workload.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <unordered_set>
#include <utility>

#include "core/stats.h"

namespace goodput {
namespace {

std::string QuantileSpec(const std::vector<double>& sorted) {
  if (sorted.front() == sorted.back()) return fmt::format("fixed:{}", std::max<int64_t>(1, std::llround(sorted[0])));
  std::string spec;
  for (double p : {0.0, 1.0, 2.5, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 97.5, 99.0, 99.5,
                   99.9, 100.0}) {
    const int64_t v = std::max<int64_t>(1, std::llround(PercentileOfSorted(sorted, p)));
    spec += fmt::format("{}p{:g}={}", spec.empty() ? "" : ",", p, v);
  }
  return spec;
}

LengthSummary SummariseLengths(std::vector<double> v) {
  LengthSummary s;
  std::sort(v.begin(), v.end());
  s.mean = *Mean(v);
  s.p50 = PercentileOfSorted(v, 50);
  s.p90 = PercentileOfSorted(v, 90);
  s.p99 = PercentileOfSorted(v, 99);
  s.max = static_cast<int64_t>(v.back());
  s.spec = QuantileSpec(v);
  std::vector<double> logs;
  for (double x : v) {
    if (x > 0) logs.push_back(std::log(x));
  }
  if (logs.size() >= 2) {
    const double m = *Mean(logs);
    double ss = 0;
    for (double l : logs) ss += (l - m) * (l - m);
    s.log_sigma = std::sqrt(ss / static_cast<double>(logs.size() - 1));
  }
  return s;
}

// The busiest run of 60 s starting at an arrival, in requests / s.
double PeakMinuteRate(const std::vector<TraceRow>& rows, double span) {
  if (span < 60) return span > 0 ? static_cast<double>(rows.size()) / span : 0;
  size_t best = 0;
  for (size_t i = 0, j = 0; i < rows.size(); ++i) {
    while (j < rows.size() && rows[j].t < rows[i].t + 60) ++j;
    best = std::max(best, j - i);
  }
  return static_cast<double>(best) / 60;
}

// Tokens of each prompt in leading blocks seen before (Mooncake's hash ids
// chain each block to everything before it, so the first unseen block ends
// the reusable prefix), over all input tokens; -1 without hashes.
double PrefixReuse(const std::vector<TraceRow>& rows) {
  std::unordered_set<int64_t> seen;
  double reused = 0, total = 0;
  bool any = false;
  for (const TraceRow& r : rows) {
    total += static_cast<double>(r.input_tokens);
    any = any || !r.block_hashes.empty();
    size_t lead = 0;
    while (lead < r.block_hashes.size() && seen.count(r.block_hashes[lead])) ++lead;
    reused += static_cast<double>(std::min<int64_t>(static_cast<int64_t>(lead) * kMooncakeBlockTokens, r.input_tokens));
    seen.insert(r.block_hashes.begin(), r.block_hashes.end());
  }
  return any && total > 0 ? reused / total : -1;
}

// One entry per class the trace names ("default" when none): its share
// and lengths, and the SLO when given.
std::string ClassesYaml(const TraceSummary& s, const std::string& slo) {
  std::string y = "classes:\n";
  for (const auto& [cls, c] : s.classes) {
    y += fmt::format("  - name: \"{}\"\n    share: {:.6g}\n    prompt: {}\n    output: {}\n",
                     cls.empty() ? "default" : cls, static_cast<double>(c.requests) / static_cast<double>(s.requests),
                     c.input.spec, c.output.spec);
    if (!slo.empty()) y += fmt::format("    slo: {}\n", slo);
  }
  return y;
}

}  // namespace

TraceSummary SummariseTrace(const std::vector<TraceRow>& rows) {
  TraceSummary s;
  s.requests = static_cast<int64_t>(rows.size());
  if (rows.empty()) return s;
  s.span_s = rows.back().t - rows.front().t;
  s.mean_rate = s.span_s > 0 ? static_cast<double>(rows.size()) / s.span_s : 0;
  s.peak_minute_rate = PeakMinuteRate(rows, s.span_s);
  std::vector<double> in, out;
  std::map<std::string, std::pair<std::vector<double>, std::vector<double>>> by_class;
  for (const TraceRow& r : rows) {
    in.push_back(static_cast<double>(r.input_tokens));
    out.push_back(static_cast<double>(r.output_tokens));
    auto& [class_in, class_out] = by_class[r.request_class];
    class_in.push_back(in.back());
    class_out.push_back(out.back());
  }
  s.input = SummariseLengths(std::move(in));
  s.output = SummariseLengths(std::move(out));
  for (auto& [cls, lengths] : by_class) {
    s.classes[cls] =
        ClassLengths{static_cast<int64_t>(lengths.first.size()), SummariseLengths(std::move(lengths.first)),
                     SummariseLengths(std::move(lengths.second))};
  }
  s.prefix_reuse = PrefixReuse(rows);
  return s;
}

std::string TraceWorkloadYaml(const TraceSummary& s, const std::string& trace_path, const std::string& name,
                              const std::string& slo, bool skip_empty) {
  return fmt::format(
             "# Made by `goodput workload from` from {}: {} requests over {:.0f} s ({:.3g} requests/s on average,\n"
             "# {:.3g} in the busiest minute). The run replays the trace; each class's lengths are the trace's\n"
             "# quantiles (linear between them) for a --rate or --concurrency that replaces it.\n"
             "name: {}\nrequests: {}\nwarmup: 10%\ncooldown: 10%\narrival:\n  type: trace\n  file: \"{}\"\n{}",
             trace_path, s.requests, s.span_s, s.mean_rate, s.peak_minute_rate, name, s.requests, trace_path,
             skip_empty ? "  skip_empty: true\n" : "") +
         ClassesYaml(s, slo);
}

std::string LengthsWorkloadYaml(const TraceSummary& s, const std::string& source, const std::string& name,
                                const std::string& slo, const std::string& note) {
  return fmt::format(
             "# Made by `goodput workload from` from {}: the lengths of {} requests, without arrival times\n"
             "# (give --rate or --concurrency). Each class's lengths are the dataset's quantiles, linear between.\n"
             "{}name: {}\nrequests: {}\nwarmup: 10%\ncooldown: 10%\n",
             source, s.requests, note.empty() ? "" : "# " + note + "\n", name, std::min<int64_t>(s.requests, 1000)) +
         ClassesYaml(s, slo);
}

}  // namespace goodput
