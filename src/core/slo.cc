#include "core/slo.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "core/stats.h"
#include "core/text.h"
#include "core/units.h"

namespace goodput {
namespace {

std::optional<SloMetric> MetricFromName(std::string_view name) {
  if (name == "ttft") return SloMetric::kTtft;
  if (name == "tpot") return SloMetric::kTpot;
  if (name == "itl") return SloMetric::kItl;
  if (name == "e2e") return SloMetric::kE2e;
  return std::nullopt;
}

// The non-empty words of `s`.
std::vector<std::string> Words(std::string_view s) {
  std::vector<std::string> words = Split(s, ' ');
  words.erase(std::remove(words.begin(), words.end(), std::string()), words.end());
  return words;
}

// Parses "ttft p99 <= 1s".
Result<SloTarget> ParseTarget(std::string_view text) {
  const std::vector<std::string> words = Words(text);
  // Allow "p99<=1s" glued forms by re-splitting around the operator.
  std::string joined;
  for (const auto& w : words) joined += w + " ";
  const size_t op = joined.find('<');
  if (words.size() < 2 || op == std::string::npos) {
    return Status::InvalidArgument(
        fmt::format("target '{}' is not of the form '<metric> p<NN> <= <duration>'", Trim(text)));
  }
  SloTarget t;
  t.strict = !(op + 1 < joined.size() && joined[op + 1] == '=');
  const std::string_view head = Trim(std::string_view(joined).substr(0, op));
  const std::string_view value = Trim(std::string_view(joined).substr(op + (t.strict ? 1 : 2)));
  const std::vector<std::string> hw = Words(head);
  if (hw.size() != 2) {
    return Status::InvalidArgument(
        fmt::format("target '{}' needs a metric and a percentile before the operator", Trim(text)));
  }
  auto metric = MetricFromName(hw[0]);
  if (!metric) {
    return Status::InvalidArgument(
        fmt::format("unknown metric '{}' in '{}' (use ttft, tpot, itl, e2e)", hw[0], Trim(text)));
  }
  t.metric = *metric;
  std::string_view p = hw[1];
  if (p.size() < 2 || (p[0] != 'p' && p[0] != 'P')) {
    return Status::InvalidArgument(fmt::format("percentile '{}' in '{}' must look like p99", p, Trim(text)));
  }
  auto [ptr, ec] = std::from_chars(p.data() + 1, p.data() + p.size(), t.percentile);
  if (ec != std::errc() || ptr != p.data() + p.size() || !(t.percentile > 0 && t.percentile <= 100)) {
    return Status::InvalidArgument(
        fmt::format("percentile '{}' in '{}' must be p followed by a number in (0, 100]", p, Trim(text)));
  }
  auto threshold = ParseDuration(value);
  if (!threshold.ok()) return threshold.status().WithContext(fmt::format("target '{}'", Trim(text)));
  if (*threshold <= 0 || *threshold > 86400) {
    return Status::InvalidArgument(fmt::format("threshold in '{}' must be positive and at most a day", Trim(text)));
  }
  t.threshold_s = *threshold;
  return t;
}

Result<ClassSlo> ParseClause(std::string_view clause) {
  ClassSlo c;
  std::string_view body = clause;
  const size_t colon = clause.find(':');
  if (colon != std::string_view::npos) {
    c.class_name = std::string(Trim(clause.substr(0, colon)));
    body = clause.substr(colon + 1);
    if (c.class_name.empty()) return Status::InvalidArgument(fmt::format("empty class name in '{}'", Trim(clause)));
    for (char ch : c.class_name) {
      if (!(std::isalnum(static_cast<unsigned char>(ch)) || ch == '_' || ch == '-' || ch == '.' || ch == '*')) {
        return Status::InvalidArgument(
            fmt::format("class name '{}' may only hold letters, digits, _ - .", c.class_name));
      }
    }
  } else {
    c.class_name = "*";
  }
  // A trailing "over DURATION" is the class's window.
  if (const size_t over = body.rfind(" over "); over != std::string_view::npos) {
    const std::string_view width = Trim(body.substr(over + 6));
    c.peak = width == "peak";
    auto w = c.peak ? Result<double>(1.0) : ParseDuration(width);
    if (!w.ok() || !(*w > 0)) {
      return Status::InvalidArgument(fmt::format(
          "class '{}': window 'over {}' must be a positive duration, e.g. over 5m, or 'peak'", c.class_name, width));
    }
    c.window_s = c.peak ? 0 : *w;
    body = body.substr(0, over);
  }
  for (auto part : Split(body, ',')) {
    if (Trim(part).empty()) continue;
    auto target = ParseTarget(part);
    if (!target.ok()) return target.status();
    for (const SloTarget& t : c.targets) {
      if (t.metric == target->metric && t.percentile == target->percentile) {
        return Status::InvalidArgument(fmt::format("class '{}' names {} p{:g} twice", c.class_name,
                                                   SloMetricName(t.metric), t.percentile));
      }
    }
    c.targets.push_back(*target);
  }
  if (c.targets.empty()) {
    return Status::InvalidArgument(fmt::format("class '{}' has no targets", c.class_name));
  }
  return c;
}

}  // namespace

std::optional<double> SloMetricValue(const RequestRecord& r, SloMetric m) {
  switch (m) {
    case SloMetric::kTtft: return Ttft(r);
    case SloMetric::kTpot: return Tpot(r);
    case SloMetric::kE2e: return E2e(r);
    case SloMetric::kItl: {
      const auto itls = Itls(r);
      if (itls.empty()) return std::nullopt;
      return *std::max_element(itls.begin(), itls.end());
    }
  }
  return std::nullopt;
}


const char* SloMetricName(SloMetric m) {
  switch (m) {
    case SloMetric::kTtft: return "ttft";
    case SloMetric::kTpot: return "tpot";
    case SloMetric::kItl: return "itl";
    case SloMetric::kE2e: return "e2e";
  }
  return "?";
}

double ClassSlo::RequiredAttainment() const {
  double p = 0;
  for (const auto& t : targets) p = std::max(p, t.percentile);
  return p / 100.0;
}

const ClassSlo* SloSpec::For(const std::string& class_name) const {
  const ClassSlo* wildcard = nullptr;
  for (const auto& c : classes) {
    if (c.class_name == class_name) return &c;
    if (c.class_name == "*") wildcard = &c;
  }
  return wildcard;
}

std::string SloSpec::ToString() const {
  std::string out;
  for (const auto& c : classes) {
    if (!out.empty()) out += "; ";
    out += c.class_name + ": ";
    for (size_t i = 0; i < c.targets.size(); ++i) {
      const auto& t = c.targets[i];
      if (i) out += ", ";
      const bool whole_seconds = t.threshold_s >= 1 && t.threshold_s == std::floor(t.threshold_s);
      const std::string value =
          whole_seconds ? fmt::format("{:g}s", t.threshold_s) : fmt::format("{:g}ms", t.threshold_s * 1e3);
      out += fmt::format("{} p{:g} {} {}", SloMetricName(t.metric), t.percentile, t.strict ? "<" : "<=", value);
    }
    if (c.window_s > 0) out += fmt::format(" over {:g}s", c.window_s);
    if (c.peak) out += " over peak";
  }
  return out;
}

Result<SloSpec> ParseSlo(std::string_view text) {
  SloSpec spec;
  for (auto clause : Split(text, ';')) {
    if (Trim(clause).empty()) continue;
    auto c = ParseClause(clause);
    if (!c.ok()) return c.status().WithContext("SLO");
    for (const auto& existing : spec.classes) {
      if (existing.class_name == c->class_name) {
        return Status::InvalidArgument(fmt::format("SLO: class '{}' appears twice", c->class_name));
      }
    }
    spec.classes.push_back(std::move(*c));
  }
  if (spec.classes.empty()) return Status::InvalidArgument("SLO: empty specification");
  return spec;
}

bool IsGood(const RequestRecord& r, const ClassSlo* slo) {
  if (!r.ok || !r.t_first) return false;
  if (slo == nullptr) return true;
  for (const auto& t : slo->targets) {
    const auto v = SloMetricValue(r, t.metric);
    if (v && !t.Met(*v)) return false;
  }
  return true;
}

namespace {

ClassReport EvaluateClass(const std::string& name, const std::vector<const RequestRecord*>& all, Window window,
                          const ClassSlo* slo) {
  ClassReport c;
  c.class_name = name;
  c.has_slo = slo != nullptr;
  c.required = slo ? slo->RequiredAttainment() : 0.0;
  std::vector<const RequestRecord*> rs;  // arrived in the window: judged
  double ok_tokens = 0, good_tokens = 0;
  for (const RequestRecord* r : all) {
    c.output_tokens += TokensServedIn(*r, window.start, window.end);
    c.completed += r->ok && r->t_last && *r->t_last >= window.start && *r->t_last < window.end;
    if (r->t_arrival < window.start || r->t_arrival >= window.end) continue;
    rs.push_back(r);
    ++c.total;
    if (!r->ok) ++c.failed;
    if (!IsGood(*r, slo)) continue;
    ++c.good;
    good_tokens += static_cast<double>(r->n_out);
  }
  for (const RequestRecord* r : rs) ok_tokens += r->ok ? static_cast<double>(r->n_out) : 0;
  if (c.total > c.failed) c.good_share = static_cast<double>(c.good) / static_cast<double>(c.total - c.failed);
  c.good_token_share = ok_tokens > 0 ? good_tokens / ok_tokens : c.good_share;
  if (c.total > 0) c.attainment = static_cast<double>(c.good) / static_cast<double>(c.total);
  c.holds = !slo || !c.attainment || *c.attainment >= c.required;
  if (!slo) return c;
  for (const auto& t : slo->targets) {
    TargetReport tr;
    tr.target = t;
    std::vector<double> values;
    for (const RequestRecord* r : rs) {
      if (!r->ok) continue;
      if (auto v = SloMetricValue(*r, t.metric)) {
        values.push_back(*v);
        if (t.Met(*v)) ++tr.met;
      }
    }
    tr.applicable = static_cast<int64_t>(values.size());
    tr.value = Percentile(std::move(values), t.percentile);
    c.targets.push_back(tr);
  }
  return c;
}

// Lowest (attainment - required) over classes with an SLO and requests.
double WorstMargin(const SloReport& r) {
  double worst = INFINITY;
  for (const auto& c : r.classes) {
    if (c.has_slo && c.attainment) worst = std::min(worst, *c.attainment - c.required);
  }
  return worst;
}

}  // namespace

SloReport Evaluate(const std::vector<RequestRecord>& records, const SloSpec& slo, Window window) {
  SloReport report;
  report.window = window;
  std::map<std::string, std::vector<const RequestRecord*>> by_class;
  for (const auto& c : slo.classes) {
    if (c.class_name != "*") by_class[c.class_name];  // an SLO class with no requests still shows
  }
  for (const auto& r : records) by_class[r.request_class].push_back(&r);
  for (const auto& [name, rs] : by_class) {
    ClassReport c = EvaluateClass(name, rs, window, slo.For(name));
    report.total += c.total;
    report.good += c.good;
    report.all_hold = report.all_hold && c.holds;
    const double secs = window.seconds();
    if (secs > 1e-9) {  // a collapsed window has no rate
      report.request_throughput += static_cast<double>(c.completed) / secs;
      report.output_throughput += c.output_tokens / secs;
      report.goodput += static_cast<double>(c.completed) / secs * c.good_share;
      report.goodput_tokens += c.output_tokens / secs * c.good_token_share;
    }
    report.classes.push_back(std::move(c));
  }
  return report;
}

WindowedReport EvaluateWindows(const std::vector<RequestRecord>& records, const SloSpec& slo,
                               Window window, double width) {
  WindowedReport out;
  out.whole = Evaluate(records, slo, window);
  if (!(width > 0)) return out;
  double worst = INFINITY;
  for (double start = window.start; start < window.end; start += width) {
    Window w{start, std::min(start + width, window.end)};
    out.windows.push_back(Evaluate(records, slo, w));
    const double margin = WorstMargin(out.windows.back());
    if (margin < worst) {
      worst = margin;
      out.worst = out.windows.size() - 1;
    }
  }
  return out;
}

}  // namespace goodput
