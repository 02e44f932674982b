// Line charts as inline SVG, so that a report is one self-contained HTML file
// that opens offline (no script, no external asset). Each series is a
// <polyline> carrying its data in data-series / data-points attributes, which
// is also how tests read a rendered chart back.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace goodput::report {

struct Series {
  std::string name;
  std::vector<std::pair<double, double>> points;  // (x, y)
  bool dashed = false;
};

struct Marker {  // a labelled horizontal (threshold) or vertical (load) line
  std::string label;
  double value = 0;
};

struct LineChart {
  std::string id;     // element id, e.g. "throughput"
  std::string title;
  std::string x_label, y_label;
  bool log_x = false;  // loads grow geometrically (1, 2, 4, ...)
  std::vector<Series> series;
  std::vector<Marker> thresholds;  // horizontal lines (SLO targets)
  std::optional<Marker> vertical;  // e.g. the capacity
};

// A chart with no series yet.
LineChart MakeChart(std::string id, std::string title, std::string x_label, std::string y_label, bool log_x);

// The chart as an <svg> element (width 640, height 360).
std::string RenderSvg(const LineChart& chart);

// "&", "<", ">" and quotes escaped for HTML text and attributes.
std::string EscapeHtml(const std::string& s);

}  // namespace goodput::report
