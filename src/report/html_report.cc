#include "report/html_report.h"

#include <map>

#include <boost/json.hpp>
#include <fmt/format.h>

#include "core/definitions.h"
#include "core/host_load.h"
#include "core/json_file.h"
#include "core/slo.h"
#include "core/units.h"
#include "measure/ladder.h"
#include "report/svg_chart.h"

namespace goodput::report {
namespace {

// Points grouped by setting, in the order stored.
std::vector<std::pair<std::string, std::vector<const StoredPoint*>>> BySetting(const std::vector<StoredPoint>& pts) {
  std::vector<std::pair<std::string, std::vector<const StoredPoint*>>> out;
  for (const auto& p : pts) {
    if (out.empty() || out.back().first != p.setting) out.emplace_back(p.setting, std::vector<const StoredPoint*>{});
    out.back().second.push_back(&p);
  }
  for (auto& [name, group] : out) {
    std::stable_sort(group.begin(), group.end(), [](const StoredPoint* a, const StoredPoint* b) {
      return LoadOf(a->summary) < LoadOf(b->summary);
    });
  }
  return out;
}

std::string Prefix(const std::string& setting) { return setting.empty() ? "" : setting + " "; }

Series Line(const std::string& name, const std::vector<const StoredPoint*>& group, double (*f)(const PointResult&),
            bool dashed = false) {
  Series s;
  s.name = name;
  s.dashed = dashed;
  for (const StoredPoint* p : group) s.points.emplace_back(LoadOf(p->summary), f(p->summary));
  return s;
}

std::vector<Marker> Thresholds(const SloSpec& slo, SloMetric metric) {
  std::vector<Marker> out;
  for (const ClassSlo& c : slo.classes) {
    for (const SloTarget& t : c.targets) {
      if (t.metric == metric) {
        out.push_back({fmt::format("{} p{:g} SLO", c.class_name, t.percentile), t.threshold_s * 1e3});
      }
    }
  }
  return out;
}

// A setting's points as the ladder of loads they were measured at.
std::vector<PointResult> Ladder(const std::vector<const StoredPoint*>& group) {
  std::vector<PointResult> ladder;
  for (const StoredPoint* p : group) ladder.push_back(p->summary);
  return ladder;
}

// A setting's capacity as the ladder judges it (measure/ladder.h).
std::optional<double> Capacity(const std::vector<const StoredPoint*>& group) {
  const std::vector<PointResult> ladder = Ladder(group);
  const std::optional<size_t> cap = LadderCapacity(ladder);
  return cap ? std::optional(LoadOf(ladder[*cap])) : std::nullopt;
}

// Other processes' share of the host's CPU while the point ran, flagged
// above kBusyHostShare; "-" when simulated or too short to judge.
std::string HostCell(const PointResult& p) {
  if (!p.host_others_share) return "-";
  const std::string share = fmt::format("{:.0f}%", 100 * *p.host_others_share);
  return *p.host_others_share > kBusyHostShare ? share + " <strong>busy host</strong>" : share;
}

std::string LoadText(const PointResult& p) {
  if (p.load.kind != ArrivalKind::kClosedLoop) return p.label;
  return fmt::format("{} client{}", p.label, p.load.concurrency == 1 ? "" : "s");
}

// One class's ladder: each load judged by that class's verdict alone (a
// load that was not sustainable fails for every class).
std::vector<PointResult> ClassLadder(const std::vector<const StoredPoint*>& group, const std::string& name) {
  std::vector<PointResult> ladder;
  for (const StoredPoint* p : group) {
    PointResult q = p->summary;
    q.verdict = Verdict::kNoData;
    for (const ClassAttainment& c : q.classes) {
      if (c.class_name == name) q.verdict = q.saturation.saturated ? Verdict::kFails : c.verdict;
    }
    ladder.push_back(std::move(q));
  }
  return ladder;
}

// Where a capacity lies: from the last load that holds to the next one
// measured, "at least" the highest tried, or why there is none.
std::string CapacityRange(const std::vector<PointResult>& ladder, std::optional<size_t> cap) {
  if (!cap) {
    for (const PointResult& p : ladder) {
      if (p.verdict == Verdict::kFails) {
        return fmt::format("none ({} at {})", p.saturation.saturated ? "not sustainable" : "fails", LoadText(p));
      }
    }
    return "not shown (undecided at every load tried: more requests decide it)";
  }
  if (*cap + 1 == ladder.size()) return fmt::format("at least {} (the highest load tried)", LoadText(ladder[*cap]));
  return fmt::format("{} (not at {})", LoadText(ladder[*cap]), LoadText(ladder[*cap + 1]));
}

// Per class with an SLO: its own capacity, and its attainment there with the
// 95% interval beside what it needs.
std::string ClassRows(const std::string& setting, const std::vector<const StoredPoint*>& group) {
  std::string rows;
  for (const ClassAttainment& c : group.front()->summary.classes) {
    if (!c.has_slo) continue;
    const std::vector<PointResult> ladder = ClassLadder(group, c.class_name);
    const std::optional<size_t> cap = LadderCapacity(ladder);
    std::string at = "-";
    for (const ClassAttainment& a : cap ? ladder[*cap].classes : std::vector<ClassAttainment>{}) {
      if (a.class_name == c.class_name) {
        at = fmt::format("{:.1f}% ({:.1f}-{:.1f}%, {} requests)", 100 * a.attainment, 100 * a.interval.lower,
                         100 * a.interval.upper, a.total);
        // A windowed SLO: these are the deciding window's figures.
        if (const std::string window = WindowText(a); !window.empty()) at += " in " + window;
      }
    }
    rows += fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:g}%</td></tr>", EscapeHtml(setting),
                        EscapeHtml(c.class_name), EscapeHtml(CapacityRange(ladder, cap)), at, 100 * c.required);
  }
  return rows;
}

// max_num_seqs from a closed-loop capacity: more running requests than the
// capacity only queue work the SLO cannot take. None while the highest load
// tried still holds: the capacity lies above it.
std::string MaxNumSeqs(const std::vector<PointResult>& ladder, std::optional<size_t> cap) {
  if (!cap || ladder[*cap].load.kind != ArrivalKind::kClosedLoop) return "";
  if (*cap + 1 == ladder.size()) return "; measure higher loads before choosing <code>--max-num-seqs</code>";
  return fmt::format("; recommended <code>--max-num-seqs {}</code> (the measured capacity; <code>goodput capacity"
                     "</code> also bounds it by the KV pool the target reports)",
                     ladder[*cap].label);
}

// The host's load over the run: the highest share other processes took.
std::string HostLine(const std::vector<StoredPoint>& points) {
  std::optional<double> worst;
  int busy = 0;
  for (const StoredPoint& p : points) {
    if (!p.summary.host_others_share) continue;
    worst = std::max(worst.value_or(0), *p.summary.host_others_share);
    busy += *p.summary.host_others_share > kBusyHostShare;
  }
  if (!worst) return "not measured (simulated, or runs too short to judge)";
  return fmt::format("other processes took up to {:.0f}% of the CPU{}", 100 * *worst,
                     busy ? fmt::format(" — <strong>{} point(s) measured on a busy host</strong>", busy) : "");
}

// The answer first: capacity per setting and class, the max_num_seqs to
// set, and what it was measured on.
std::string Answer(const StoredRun& run, const std::vector<StoredPoint>& points) {
  std::string s = "<section id='answer'><h2>Answer</h2>";
  std::string rows;
  for (const auto& [setting, group] : BySetting(points)) {
    const std::vector<PointResult> ladder = Ladder(group);
    const std::optional<size_t> cap = LadderCapacity(ladder);
    s += fmt::format("<p class='capacity'>{}capacity (every class holds its SLO): <strong>{}</strong>{}</p>",
                     setting.empty() ? "" : "<code>" + EscapeHtml(setting) + "</code> ",
                     EscapeHtml(CapacityRange(ladder, cap)), MaxNumSeqs(ladder, cap));
    rows += ClassRows(setting.empty() ? "-" : setting, group);
  }
  if (!rows.empty()) {
    s += "<table class='classes'><tr><th>setting</th><th>class</th><th>capacity</th><th>attainment there "
         "(95% interval)</th><th>needs</th></tr>" + rows + "</table>";
  }
  return s + fmt::format("<p>model <strong>{}</strong> on {} ({}); host: {}</p></section>", EscapeHtml(run.info.model),
                         EscapeHtml(run.info.target), EscapeHtml(run.info.hardware), HostLine(points));
}

std::string Table(const std::vector<StoredPoint>& points) {
  std::string s = "<table><tr><th>setting</th><th>load</th><th>throughput tok/s</th><th>TTFT p50</th><th>TTFT p99</th>"
                  "<th>TPOT p50</th><th>TPOT p99</th><th>goodput req/s</th><th>spread</th><th>verdict</th>"
                  "<th>other processes' CPU</th></tr>";
  for (const auto& sp : points) {
    const PointResult& p = sp.summary;
    s += fmt::format("<tr><td>{}</td><td>{}</td><td>{:.0f}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>"
                     "<td>{:.2f}</td><td>{:.1f}%</td><td>{}</td><td>{}</td></tr>",
                     EscapeHtml(sp.setting.empty() ? "-" : sp.setting), EscapeHtml(p.label), p.throughput,
                     FormatDuration(p.ttft.p50), FormatDuration(p.ttft.p99), FormatDuration(p.tpot.p50),
                     FormatDuration(p.tpot.p99), p.goodput, 100 * p.throughput_spread, p.verdict_text(),
                     HostCell(p));
  }
  return s + "</table>";
}

// The attainment of each class with an SLO, its 95% interval as a band; what
// each class without one got, by its throughput (into `unjudged`).
void ClassSeries(const std::string& pre, const std::vector<const StoredPoint*>& group, LineChart& att,
                 LineChart& unjudged) {
  std::map<std::string, Series> classes, others;
  for (const StoredPoint* p : group) {
    const double load = LoadOf(p->summary);
    for (const ClassAttainment& c : p->summary.classes) {
      const std::string name = pre + c.class_name + (c.has_slo ? "" : c.offline ? " (offline)" : " (no SLO)");
      Series& s = (c.has_slo ? classes : others)[name];
      s.name = name;
      s.points.emplace_back(load, c.has_slo ? 100 * c.attainment : c.throughput);
      if (c.has_slo) s.band.push_back({load, 100 * c.interval.lower, 100 * c.interval.upper});
    }
  }
  for (auto& [name, s] : classes) att.series.push_back(std::move(s));
  for (auto& [name, s] : others) unjudged.series.push_back(std::move(s));
}

// Throughput against what one request sees (1 / TPOT p50), load by load:
// the trade-off vLLM's `bench sweep plot_pareto` draws.
Series ParetoSeries(const std::string& pre, const std::vector<const StoredPoint*>& group) {
  Series s;
  s.name = pre + "by load";
  for (const StoredPoint* p : group) s.points.emplace_back(p->summary.per_request_speed, p->summary.throughput);
  return s;
}

// One latency's CDF per load (with several settings, each at its capacity,
// else its highest load, to stay readable), the SLO targets as vertical lines.
LineChart CdfChart(const char* id, const char* metric, SloMetric slo_metric, LatencyStats PointResult::*stats,
                   const std::vector<std::pair<std::string, std::vector<const StoredPoint*>>>& groups,
                   const SloSpec& slo) {
  LineChart c = MakeChart(id, fmt::format("{} distribution (CDF)", metric), fmt::format("{} (ms)", metric),
                          slo_metric == SloMetric::kItl ? "% of token gaps at or below" : "% of requests at or below",
                          false);
  for (const auto& [setting, group] : groups) {
    const std::vector<PointResult> ladder = Ladder(group);
    const std::optional<size_t> cap = LadderCapacity(ladder);
    for (size_t i = 0; i < ladder.size(); ++i) {
      if (groups.size() > 1 && i != cap.value_or(ladder.size() - 1)) continue;
      Series s;
      s.name = Prefix(setting) + LoadText(ladder[i]);
      s.markers = false;
      for (auto [percentile, value] : (ladder[i].*stats).distribution) s.points.emplace_back(1e3 * value, percentile);
      if (!s.points.empty()) c.series.push_back(std::move(s));
    }
  }
  // An SLO far beyond every measured value (a 2-minute TTFT target over
  // sub-second TTFTs) would squeeze the curves against the axis: the axis
  // label names it instead of the plot drawing it.
  double widest = 0;
  for (const Series& s : c.series) {
    for (auto [x, y] : s.points) widest = std::max(widest, x);
  }
  for (const Marker& m : Thresholds(slo, slo_metric)) {
    if (m.value <= 3 * widest) {
      c.verticals.push_back(m);
    } else {
      c.x_label += fmt::format("; {} at {:g} ms, off the axis", m.label, m.value);
    }
  }
  return c;
}

std::vector<LineChart> Charts(const std::vector<StoredPoint>& points, const SloSpec& slo, const std::string& x_label) {
  const auto groups = BySetting(points);
  const auto chart = [&](const char* id, const char* title, const char* y_label) {
    return MakeChart(id, title, x_label, y_label, true);
  };
  LineChart thr = chart("throughput", "Output throughput vs load", "tokens / s");
  LineChart ttft = chart("ttft", "TTFT vs load", "ms");
  LineChart tpot = chart("tpot", "TPOT vs load", "ms");
  LineChart att = chart("attainment", "SLO attainment vs load (band: 95% interval)", "% of requests good");
  LineChart good = chart("goodput", "Goodput vs load", "good requests / s");
  LineChart pareto = MakeChart("pareto", "Throughput vs per-request speed",
                               "tokens / s one request sees (1 / TPOT p50)", "output tokens / s", false);
  ttft.thresholds = Thresholds(slo, SloMetric::kTtft);
  tpot.thresholds = Thresholds(slo, SloMetric::kTpot);
  for (const auto& [setting, group] : groups) {
    const std::string pre = Prefix(setting);
    thr.series.push_back(Line(pre + "throughput", group, [](const PointResult& p) { return p.throughput; }));
    ttft.series.push_back(Line(pre + "p50", group, [](const PointResult& p) { return p.ttft.p50 * 1e3; }, true));
    ttft.series.push_back(Line(pre + "p99", group, [](const PointResult& p) { return p.ttft.p99 * 1e3; }));
    tpot.series.push_back(Line(pre + "p50", group, [](const PointResult& p) { return p.tpot.p50 * 1e3; }, true));
    tpot.series.push_back(Line(pre + "p99", group, [](const PointResult& p) { return p.tpot.p99 * 1e3; }));
    good.series.push_back(Line(pre + "goodput", group, [](const PointResult& p) { return p.goodput; }));
    pareto.series.push_back(ParetoSeries(pre, group));
    ClassSeries(pre, group, att, thr);
    if (groups.size() == 1) {
      if (auto cap = Capacity(group)) {
        const Marker m{fmt::format("capacity {:g}", *cap), *cap, true};
        att.verticals = good.verticals = {m};
      }
    }
  }
  for (const ClassSlo& c : slo.classes) {
    att.thresholds.push_back({fmt::format("{} needs {:g}%", c.class_name, 100 * c.RequiredAttainment()),
                              100 * c.RequiredAttainment()});
  }
  std::vector<LineChart> out{thr, ttft, tpot, att, good, pareto};
  for (LineChart c : {CdfChart("ttft_cdf", "TTFT", SloMetric::kTtft, &PointResult::ttft, groups, slo),
                      CdfChart("tpot_cdf", "TPOT", SloMetric::kTpot, &PointResult::tpot, groups, slo),
                      CdfChart("itl_cdf", "ITL", SloMetric::kItl, &PointResult::itl, groups, slo)}) {
    if (!c.series.empty()) out.push_back(std::move(c));  // summaries stored before distributions have none
  }
  return out;
}

}  // namespace

std::string HtmlReport(const StoredRun& run, const std::vector<StoredPoint>& points) {
  auto slo = ParseSlo(run.info.slo);
  const SloSpec spec = slo.ok() ? *slo : SloSpec{};
  const bool closed = points.empty() || points[0].summary.load.kind == ArrivalKind::kClosedLoop;
  std::string html = fmt::format(
      "<!DOCTYPE html><html><head><meta charset='utf-8'><title>goodput run {0}</title><style>"
      "body{{font-family:sans-serif;margin:24px;color:#222}} table{{border-collapse:collapse;margin:12px 0}}"
      "td,th{{border:1px solid #ccc;padding:3px 8px;text-align:right}} th{{background:#f4f4f4}}"
      ".charts svg{{margin:8px;border:1px solid #eee}} dt{{font-weight:bold}} "
      ".definitions{{color:#444}}</style></head><body>"
      "<h1>goodput run {0}</h1>{9}<h2>The "
      "run</h2><dl><dt>command</dt><dd><code>{1}</code></dd><dt>target</dt><dd>{2}</dd>"
      "<dt>hardware</dt><dd>{3}</dd><dt>workload</dt><dd>{4}</dd><dt>SLO</dt><dd>{5}</dd><dt>status</dt><dd>{6}, "
      "started {7} UTC; goodput version {8}</dd></dl>",
      run.id, EscapeHtml(run.info.command), EscapeHtml(run.info.target), EscapeHtml(run.info.hardware),
      EscapeHtml(run.info.workload_name), EscapeHtml(run.info.slo.empty() ? "none" : run.info.slo),
      EscapeHtml(run.status), EscapeHtml(run.started_at), EscapeHtml(run.info.version), Answer(run, points));
  html += "<h2>Points</h2>" + Table(points) + "<div class='charts'>";
  for (const LineChart& c : Charts(points, spec, closed ? "concurrency (clients)" : "request rate (req/s)")) {
    html += RenderSvg(c);
  }
  return html + "</div><pre class='definitions'>" + EscapeHtml(kMetricDefinitions) + "</pre></body></html>\n";
}

Status WriteHtmlReport(Ledger& ledger, int64_t run_id, const std::string& path) {
  GOODPUT_ASSIGN_OR_RETURN(StoredRun run, ledger.GetRun(run_id));
  GOODPUT_ASSIGN_OR_RETURN(std::vector<StoredPoint> points, ledger.GetPoints(run_id));
  return WriteFileAtomically(path, HtmlReport(run, points));
}

}  // namespace goodput::report
