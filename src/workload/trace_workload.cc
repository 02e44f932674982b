#include "workload/trace_workload.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <unordered_set>
#include <utility>

#include "core/stats.h"
#include "workload/day_profile.h"

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

Result<std::map<std::string, std::vector<double>>> TraceRateProfile(const std::vector<TraceRow>& rows, double step_s) {
  if (rows.empty() || !(step_s > 0)) return Status::InvalidArgument("no arrivals, or a step that is not positive");
  const double t0 = rows.front().t;
  const auto steps = static_cast<size_t>(std::floor((rows.back().t - t0) / step_s));
  if (steps == 0) {
    return Status::InvalidArgument(
        fmt::format("the trace spans {:.0f} s, less than one step of {:g} s: give a shorter "
                    "--profile-step",
                    rows.back().t - t0, step_s));
  }
  if (steps > kMaxProfileSteps) {
    return Status::InvalidArgument(
        fmt::format("the trace spans {} steps of {:g} s; a profile holds at most {}: give a "
                    "longer --profile-step",
                    steps, step_s, kMaxProfileSteps));
  }
  std::map<std::string, std::vector<double>> out;
  for (const TraceRow& r : rows) out[r.request_class].resize(steps, 0.0);
  for (const TraceRow& r : rows) {  // counts first: count / step is the rate as close as a double gets
    const auto k = static_cast<size_t>((r.t - t0) / step_s);
    if (k < steps) out[r.request_class][k] += 1;
  }
  for (auto& [cls, rates] : out) {
    for (double& r : rates) r /= step_s;
  }
  for (auto it = out.begin(); it != out.end();) {  // a class seen only in the part step left out
    const bool none = std::all_of(it->second.begin(), it->second.end(), [](double r) { return r == 0; });
    it = none ? out.erase(it) : std::next(it);
  }
  return out;
}

std::string ProfileWorkloadYaml(const TraceSummary& s, const std::map<std::string, std::vector<double>>& profile,
                                double step_s, const std::string& source, const std::string& name,
                                const std::string& slo) {
  const size_t steps = profile.empty() ? 0 : profile.begin()->second.size();
  std::string y = fmt::format(
      "# Made by `goodput workload from --profile-step` from {}: its arrivals per {:g} s over {} whole steps\n"
      "# ({:.0f} s of the trace's {:.0f}), as each class's rate (requests/s) per step; the lengths are the\n"
      "# trace's quantiles (linear between them). A run follows the profile (docs/sim.md, \"A day\").\n"
      "name: {}\nseed: 1\nprofile_step: {:g}s\nclasses:\n",
      source, step_s, steps, static_cast<double>(steps) * step_s, s.span_s, name, step_s);
  for (const auto& [cls, rates] : profile) {
    const ClassLengths& c = s.classes.at(cls);
    std::string list;
    for (double r : rates) list += fmt::format("{}{:.6g}", list.empty() ? "" : ", ", r);
    y += fmt::format("  - name: \"{}\"\n    profile: [{}]\n    prompt: {}\n    output: {}\n",
                     cls.empty() ? "default" : cls, list, c.input.spec, c.output.spec);
    if (!slo.empty()) y += fmt::format("    slo: {}\n", slo);
  }
  return y;
}

}  // namespace goodput
