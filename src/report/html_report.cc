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
    std::stable_sort(group.begin(), group.end(),
                     [](const StoredPoint* a, const StoredPoint* b) { return LoadOf(a->summary) < LoadOf(b->summary); });
  }
  return out;
}

std::string Prefix(const std::string& setting) { return setting.empty() ? "" : setting + " "; }

Series Line(const std::string& name, const std::vector<const StoredPoint*>& group, double (*f)(const PointResult&),
            bool dashed = false) {
  Series s{name, {}, dashed};
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

// A setting's capacity as the ladder judges it (measure/ladder.h).
std::optional<double> Capacity(const std::vector<const StoredPoint*>& group) {
  std::vector<PointResult> ladder;
  for (const StoredPoint* p : group) ladder.push_back(p->summary);
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
                     FormatDuration(p.tpot.p99), p.goodput, 100 * p.throughput_spread, VerdictName(p.verdict),
                     HostCell(p));
  }
  return s + "</table>";
}

std::vector<LineChart> Charts(const std::vector<StoredPoint>& points, const SloSpec& slo, const std::string& x_label) {
  const auto groups = BySetting(points);
  const auto chart = [&](const char* id, const char* title, const char* y_label) {
    return MakeChart(id, title, x_label, y_label, true);
  };
  LineChart thr = chart("throughput", "Output throughput vs load", "tokens / s");
  LineChart ttft = chart("ttft", "TTFT vs load", "ms");
  LineChart tpot = chart("tpot", "TPOT vs load", "ms");
  LineChart att = chart("attainment", "SLO attainment vs load", "% of requests good");
  LineChart good = chart("goodput", "Goodput vs load", "good requests / s");
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
    std::map<std::string, Series> classes, unjudged;  // attainment per class; what classes without an SLO got
    for (const StoredPoint* p : group) {
      for (const ClassAttainment& c : p->summary.classes) {
        const std::string name = pre + c.class_name + (c.has_slo ? "" : c.offline ? " (offline)" : " (no SLO)");
        Series& s = (c.has_slo ? classes : unjudged)[name];
        s.name = name;
        s.points.emplace_back(LoadOf(p->summary), c.has_slo ? 100 * c.attainment : c.throughput);
      }
    }
    for (auto& [name, s] : classes) att.series.push_back(std::move(s));
    for (auto& [name, s] : unjudged) thr.series.push_back(std::move(s));
    if (groups.size() == 1) {
      if (auto cap = Capacity(group)) att.vertical = good.vertical = Marker{fmt::format("capacity {:g}", *cap), *cap};
    }
  }
  for (const ClassSlo& c : slo.classes) {
    att.thresholds.push_back({fmt::format("{} needs {:g}%", c.class_name, 100 * c.RequiredAttainment()),
                              100 * c.RequiredAttainment()});
  }
  return {thr, ttft, tpot, att, good};
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
      ".charts svg{{margin:8px;border:1px solid #eee}} dt{{font-weight:bold}} .definitions{{color:#444}}</style></head><body>"
      "<h1>goodput run {0}</h1><dl><dt>command</dt><dd><code>{1}</code></dd><dt>target</dt><dd>{2}</dd>"
      "<dt>hardware</dt><dd>{3}</dd><dt>workload</dt><dd>{4}</dd><dt>SLO</dt><dd>{5}</dd><dt>status</dt><dd>{6}, "
      "started {7} UTC; goodput version {8}</dd></dl>",
      run.id, EscapeHtml(run.info.command), EscapeHtml(run.info.target), EscapeHtml(run.info.hardware),
      EscapeHtml(run.info.workload_name), EscapeHtml(run.info.slo.empty() ? "none" : run.info.slo),
      EscapeHtml(run.status), EscapeHtml(run.started_at), EscapeHtml(run.info.version));
  html += Table(points) + "<div class='charts'>";
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
