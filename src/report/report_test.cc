#include "report/html_report.h"
#include "report/svg_chart.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

namespace goodput::report {
namespace {

TEST(SvgChart, SeriesCarryTheirDataAndThresholdsTheirValues) {
  LineChart c = MakeChart("ttft", "TTFT <vs> load", "concurrency", "ms", true);
  c.series.emplace_back().name = "p99";
  c.series.back().points = {{1, 120}, {2, 150}, {4, 900}};
  c.thresholds.push_back({"interactive p99 SLO", 1000});
  c.verticals.push_back(Marker{"capacity 4", 4, true});
  const std::string svg = RenderSvg(c);
  EXPECT_NE(svg.find("data-series='p99' data-points='1,120 2,150 4,900'"), std::string::npos) << svg;
  EXPECT_NE(svg.find("class='threshold' data-label='interactive p99 SLO' data-value='1000'"), std::string::npos);
  EXPECT_NE(svg.find("class='marker' data-label='capacity 4' data-value='4'"), std::string::npos);
  EXPECT_NE(svg.find("TTFT &lt;vs&gt; load"), std::string::npos);  // escaped
  EXPECT_EQ(svg.find("<vs>"), std::string::npos);
}

// A chart of one load still shows it (a polyline of one point draws
// nothing); SLO lines are named in the legend, in a style no series has.
TEST(SvgChart, OnePointShowsAndSloLinesAreNamedInTheLegend) {
  LineChart c = MakeChart("ttft", "TTFT", "concurrency", "ms", true);
  c.series.emplace_back().name = "p99";
  c.series.back().points = {{8, 120}};
  c.thresholds.push_back({"interactive p99 SLO", 1000});
  const std::string svg = RenderSvg(c);
  EXPECT_NE(svg.find("<circle class='point'"), std::string::npos) << svg;
  EXPECT_NE(svg.find("<g class='legend'>"), std::string::npos);
  const size_t legend = svg.find("<g class='legend'>");
  EXPECT_NE(svg.find(">interactive p99 SLO</text>", legend), std::string::npos) << "named in the legend";
  EXPECT_EQ(svg.find(">interactive p99 SLO</text>"), svg.find(">interactive p99 SLO</text>", legend))
      << "and nowhere else";
  EXPECT_NE(svg.find("class='threshold' data-label='interactive p99 SLO' data-value='1000' x1='76' x2='496' "
                     "y1='56.4' y2='56.4' stroke='#333' stroke-width='1.5' stroke-dasharray='2 3'"),
            std::string::npos)
      << "1000 on a y axis to 1080: 36 + 276 x (1 - 1000 / 1080) = 56.4";
}

// A band is drawn around its line: the highs left to right, the lows back.
TEST(SvgChart, ABandGoesOutAlongItsHighsAndBackAlongItsLows) {
  LineChart c = MakeChart("a", "a", "x", "y", false);
  c.series.emplace_back().name = "s";
  c.series.back().points = {{0, 50}, {10, 50}};
  c.series.back().band = {{0, 40, 100}, {10, 0, 60}};
  // x 0..10 over 76..496; y 0..108 over 312..36.
  EXPECT_NE(RenderSvg(c).find("<polygon class='band' data-series='s' points='76.0,56.4 496.0,158.7 496.0,312.0 "
                              "76.0,209.8 '"),
            std::string::npos)
      << RenderSvg(c);
}

TEST(SvgChart, NonFiniteValuesAreLeftOut) {
  LineChart c = MakeChart("g", "g", "x", "y", false);
  c.series.emplace_back().name = "s";
  c.series.back().points = {{1, 1}, {2, std::nan("")}, {3, 3}};
  EXPECT_NE(RenderSvg(c).find("data-points='1,1 3,3'"), std::string::npos);
}

// A run of three loads: the answer first (the capacity, each class's own,
// max_num_seqs), then the table and the charts with every figure in them.
TEST(HtmlReport, TheAnswerFirstThenTheTableAndTheCharts) {
  StoredRun run;
  run.id = 3;
  run.status = "complete";
  run.info.slo = "interactive: ttft p99 <= 1s, tpot p99 <= 100ms; agent: ttft p99 <= 2s";
  run.info.command = "goodput sweep --target embedded";
  run.info.model = "goodput-small";
  std::vector<StoredPoint> points;
  for (int c : {1, 2, 4}) {
    StoredPoint p;
    p.summary.load.concurrency = c;
    p.summary.label = std::to_string(c);
    p.summary.throughput = 50.0 * c;
    p.summary.per_request_speed = 100.0 / c;
    p.summary.goodput = c == 4 ? 0.5 : 1.0 * c;
    p.summary.verdict = c == 1 ? Verdict::kHolds : Verdict::kFails;
    p.summary.ttft.distribution = {{0, 0.010 * c}, {50, 0.020 * c}, {100, 0.040 * c}};
    ClassAttainment a;  // holds up to 2 clients
    a.class_name = "interactive";
    a.has_slo = true;
    a.attainment = c < 4 ? 1.0 : 0.5;
    a.interval = {c < 4 ? 0.995 : 0.4, c < 4 ? 1.0 : 0.6};
    a.total = 800;
    a.required = 0.99;
    a.verdict = c < 4 ? Verdict::kHolds : Verdict::kFails;
    ClassAttainment agent = a;  // holds only at 1 client: the run's capacity
    agent.class_name = "agent";
    agent.verdict = c == 1 ? Verdict::kHolds : Verdict::kFails;
    ClassAttainment batch;  // an offline class: measured by what it got
    batch.class_name = "batch";
    batch.offline = true;
    batch.throughput = 10.0 * c;
    p.summary.classes = {a, agent, batch};
    if (c == 2) p.summary.host_others_share = 0.35;
    if (c == 4) p.summary.host_others_share = 0.02;
    points.push_back(p);
  }
  const std::string html = HtmlReport(run, points);
  const size_t answer = html.find("<section id='answer'>");
  ASSERT_NE(answer, std::string::npos);
  EXPECT_LT(answer, html.find("<h2>The run</h2>"));
  EXPECT_LT(answer, html.find("<table>"));
  EXPECT_NE(html.find("capacity (every class holds its SLO): <strong>1 client (not at 2 clients)</strong>; "
                      "recommended <code>--max-num-seqs 1</code>"),
            std::string::npos)
      << html.substr(answer, 800);
  EXPECT_NE(html.find("<td>interactive</td><td>2 clients (not at 4 clients)</td><td>100.0% (99.5-100.0%, 800 "
                      "requests)</td><td>99%</td>"),
            std::string::npos)
      << "each class's own capacity";
  EXPECT_NE(html.find("<td>agent</td><td>1 client (not at 2 clients)</td>"), std::string::npos);
  EXPECT_NE(html.find("host: other processes took up to 35% of the CPU — <strong>1 point(s) measured on a busy "
                      "host</strong>"),
            std::string::npos);
  EXPECT_NE(html.find("model <strong>goodput-small</strong>"), std::string::npos);
  EXPECT_NE(html.find("<td>35% <strong>busy host</strong></td>"), std::string::npos);  // flagged
  EXPECT_NE(html.find("<td>2%</td>"), std::string::npos);                               // a quiet host's share
  EXPECT_NE(html.find("<td>-</td></tr>"), std::string::npos);                           // not judged
  for (const char* id : {"throughput", "ttft", "tpot", "attainment", "goodput", "pareto", "ttft_cdf"}) {
    EXPECT_NE(html.find(std::string("<svg id='") + id + "'"), std::string::npos) << id;
  }
  EXPECT_EQ(html.find("<svg id='itl_cdf'"), std::string::npos) << "no distribution stored, no chart";
  EXPECT_NE(html.find("data-series='throughput' data-points='1,50 2,100 4,200'"), std::string::npos);
  EXPECT_NE(html.find("data-series='interactive' data-points='1,100 2,100 4,50'"), std::string::npos);
  EXPECT_NE(html.find("<polygon class='band' data-series='interactive'"), std::string::npos) << "its interval";
  EXPECT_NE(html.find("data-series='batch (offline)' data-points='1,10 2,20 4,40'"), std::string::npos);  // throughput
  EXPECT_NE(html.find("data-series='by load' data-points='100,50 50,100 25,200'"), std::string::npos);  // Pareto
  EXPECT_NE(html.find("data-series='2 clients' data-points='20,0 40,50 80,100'"), std::string::npos);  // CDF, ms
  EXPECT_NE(html.find("data-label='capacity 1'"), std::string::npos);               // last load that holds
  EXPECT_NE(html.find("data-label='interactive p99 SLO' data-value='100'"), std::string::npos);  // TPOT, in ms
  EXPECT_NE(html.find("ITL = the gap between token-carrying"), std::string::npos);  // the shared definitions
  EXPECT_NE(html.find("Definitions (docs/metrics.md)"), std::string::npos);         // a file the user has
  EXPECT_EQ(html.find("<script"), std::string::npos);  // opens offline: nothing to fetch or run
  EXPECT_EQ(html.find("src="), std::string::npos);  // no external asset
  EXPECT_EQ(html.find("href="), std::string::npos);
}

// A CDF's SLO line is drawn where the curves are; one far beyond them (a
// 2-minute TTFT target over sub-second TTFTs) is named on the axis instead.
TEST(HtmlReport, AnSloFarBeyondTheDistributionIsNamedNotDrawn) {
  StoredRun run;
  run.info.slo = "interactive: ttft p90 <= 2min, tpot p90 <= 100ms";
  std::vector<StoredPoint> points(1);
  PointResult& p = points[0].summary;
  p.load.concurrency = 4;
  p.label = "4";
  p.ttft.distribution = {{0, 0.1}, {50, 0.3}, {100, 0.9}};
  p.tpot.distribution = {{0, 0.02}, {50, 0.04}, {100, 0.08}};
  const std::string html = HtmlReport(run, points);
  const auto chart = [&](const std::string& id) {
    const size_t from = html.find("<svg id='" + id + "'");
    return from == std::string::npos ? std::string() : html.substr(from, html.find("</svg>", from) - from);
  };
  const std::string ttft = chart("ttft_cdf"), tpot = chart("tpot_cdf");
  EXPECT_NE(ttft.find("TTFT (ms); interactive p90 SLO at 120000 ms, off the axis"), std::string::npos) << ttft;
  EXPECT_EQ(ttft.find("class='threshold'"), std::string::npos) << "not drawn";
  EXPECT_NE(tpot.find("class='threshold' data-label='interactive p90 SLO' data-value='100' x1"), std::string::npos)
      << "TPOT's 100 ms target lies among its 20-80 ms: drawn";
}

// Without a load that holds: the first that fails, or that none decided.
TEST(HtmlReport, NoCapacitySaysWhy) {
  StoredRun run;
  run.info.slo = "interactive: ttft p99 <= 1s";
  std::vector<StoredPoint> points(2);
  for (int i = 0; i < 2; ++i) {
    points[i].summary.load.concurrency = 8 << i;
    points[i].summary.label = std::to_string(8 << i);
    points[i].summary.verdict = Verdict::kUndecided;
  }
  EXPECT_NE(HtmlReport(run, points).find("<strong>not shown (undecided at every load tried"), std::string::npos);
  points[1].summary.verdict = Verdict::kFails;
  EXPECT_NE(HtmlReport(run, points).find("<strong>none (fails at 16 clients)</strong>"), std::string::npos);
}

// A load that was not sustainable is named so, and no class claims it, even
// one whose own attainment held there.
TEST(HtmlReport, ALoadThatWasNotSustainableIsNoClasssCapacity) {
  StoredRun run;
  run.info.slo = "interactive: ttft p99 <= 1s";
  std::vector<StoredPoint> points(2);
  for (int i = 0; i < 2; ++i) {
    PointResult& p = points[i].summary;
    p.load = ArrivalSpec{ArrivalKind::kPoisson, 1, 4.0 * (i + 1), 1};
    p.label = fmt::format("{}/s", 4 * (i + 1));
    ClassAttainment a;
    a.class_name = "interactive";
    a.has_slo = true;
    a.required = 0.99;
    a.total = 500;
    a.attainment = 1;
    a.interval = {0.993, 1};
    a.verdict = Verdict::kHolds;
    p.classes = {a};
  }
  points[1].summary.saturation.saturated = true;
  points[1].summary.verdict = Verdict::kFails;
  const std::string html = HtmlReport(run, points);
  EXPECT_NE(html.find("<td>interactive</td><td>4/s (not at 8/s)</td>"), std::string::npos) << html;
  EXPECT_NE(html.find("<td>not sustainable</td>"), std::string::npos);
  points[0].summary.saturation.saturated = true;
  points[0].summary.verdict = Verdict::kFails;
  EXPECT_NE(HtmlReport(run, points).find("<strong>none (not sustainable at 4/s)</strong>"), std::string::npos);
}

}  // namespace
}  // namespace goodput::report
