#include "report/html_report.h"
#include "report/svg_chart.h"

#include <gtest/gtest.h>

namespace goodput::report {
namespace {

TEST(SvgChart, SeriesCarryTheirDataAndThresholdsTheirValues) {
  LineChart c = MakeChart("ttft", "TTFT <vs> load", "concurrency", "ms", true);
  c.series.push_back({"p99", {{1, 120}, {2, 150}, {4, 900}}});
  c.thresholds.push_back({"interactive p99 SLO", 1000});
  c.vertical = Marker{"capacity 4", 4};
  const std::string svg = RenderSvg(c);
  EXPECT_NE(svg.find("data-series='p99' data-points='1,120 2,150 4,900'"), std::string::npos) << svg;
  EXPECT_NE(svg.find("class='threshold' data-label='interactive p99 SLO' data-value='1000'"), std::string::npos);
  EXPECT_NE(svg.find("class='marker' data-label='capacity 4' data-value='4'"), std::string::npos);
  EXPECT_NE(svg.find("TTFT &lt;vs&gt; load"), std::string::npos);  // escaped
  EXPECT_EQ(svg.find("<vs>"), std::string::npos);
}

TEST(SvgChart, NonFiniteValuesAreLeftOut) {
  LineChart c = MakeChart("g", "g", "x", "y", false);
  c.series.push_back({"s", {{1, 1}, {2, std::nan("")}, {3, 3}}});
  EXPECT_NE(RenderSvg(c).find("data-points='1,1 3,3'"), std::string::npos);
}

TEST(HtmlReport, OneFileWithTableAndFiveCharts) {
  StoredRun run;
  run.id = 3;
  run.status = "complete";
  run.info.slo = "interactive: ttft p99 <= 1s, tpot p99 <= 100ms";
  run.info.command = "goodput sweep --target embedded";
  std::vector<StoredPoint> points;
  for (int c : {1, 2, 4}) {
    StoredPoint p;
    p.summary.load.concurrency = c;
    p.summary.label = std::to_string(c);
    p.summary.throughput = 50.0 * c;
    p.summary.goodput = c == 4 ? 0.5 : 1.0 * c;
    p.summary.verdict = c < 4 ? Verdict::kHolds : Verdict::kFails;
    ClassAttainment a;
    a.class_name = "interactive";
    a.has_slo = true;
    a.attainment = c < 4 ? 1.0 : 0.5;
    ClassAttainment batch;  // an offline class: measured by what it got
    batch.class_name = "batch";
    batch.offline = true;
    batch.throughput = 10.0 * c;
    p.summary.classes = {a, batch};
    if (c == 2) p.summary.host_others_share = 0.35;
    if (c == 4) p.summary.host_others_share = 0.02;
    points.push_back(p);
  }
  const std::string html = HtmlReport(run, points);
  EXPECT_NE(html.find("<td>35% <strong>busy host</strong></td>"), std::string::npos);  // flagged
  EXPECT_NE(html.find("<td>2%</td>"), std::string::npos);                               // a quiet host's share
  EXPECT_NE(html.find("<td>-</td></tr>"), std::string::npos);                           // not judged
  for (const char* id : {"throughput", "ttft", "tpot", "attainment", "goodput"}) {
    EXPECT_NE(html.find(std::string("<svg id='") + id + "'"), std::string::npos) << id;
  }
  EXPECT_NE(html.find("data-series='throughput' data-points='1,50 2,100 4,200'"), std::string::npos);
  EXPECT_NE(html.find("data-series='interactive' data-points='1,100 2,100 4,50'"), std::string::npos);
  EXPECT_NE(html.find("data-series='batch (offline)' data-points='1,10 2,20 4,40'"), std::string::npos);  // throughput
  EXPECT_NE(html.find("data-label='capacity 2'"), std::string::npos);               // last load that holds
  EXPECT_NE(html.find("data-label='interactive p99 SLO' data-value='100'"), std::string::npos);  // TPOT, in ms
  EXPECT_NE(html.find("ITL = the gap between token-carrying"), std::string::npos);  // the shared definitions
  EXPECT_EQ(html.find("<script"), std::string::npos);  // opens offline: nothing to fetch or run
  EXPECT_EQ(html.find("src="), std::string::npos);  // no external asset
  EXPECT_EQ(html.find("href="), std::string::npos);
}

}  // namespace
}  // namespace goodput::report
