// Line charts as inline SVG, so that a report is one self-contained HTML file
// that opens offline (no script, no external asset). Each series is a
// <polyline> carrying its data in data-series / data-points attributes, which
// is also how tests read a rendered chart back. No text is placed where it
// could meet other text: series and SLO lines are named in a legend beside
// the plot, one row each, and the one label inside the plot (the capacity)
// sits on the side of its line that has room.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <vector>

namespace goodput::report {

struct Series {
  std::string name;
  std::vector<std::pair<double, double>> points;  // (x, y), drawn in this order
  bool dashed = false;
  bool markers = true;  // a circle on every point (so a single point shows)
  // A shaded band: (x, low, high) per point, e.g. a 95% interval.
  std::vector<std::array<double, 3>> band;
};

// A labelled line across the plot: an SLO target (drawn dotted, dark, named
// in the legend) or the capacity (solid green, labelled at its top).
struct Marker {
  std::string label;
  double value = 0;
  bool capacity = false;
};

struct LineChart {
  std::string id;     // element id, e.g. "throughput"
  std::string title;
  std::string x_label, y_label;
  bool log_x = false;  // loads grow geometrically (1, 2, 4, ...): ticks at the measured loads
  std::vector<Series> series;
  std::vector<Marker> thresholds;  // horizontal lines (SLO targets on a latency axis)
  std::vector<Marker> verticals;   // vertical lines (the capacity; SLO targets on a CDF's latency axis)
};

// A chart with no series yet.
LineChart MakeChart(std::string id, std::string title, std::string x_label, std::string y_label, bool log_x);

// The chart as an <svg> element: a 420 x 276 plot, the legend to its right
// (the element widens and lengthens to hold it).
std::string RenderSvg(const LineChart& chart);

// "&", "<", ">" and quotes escaped for HTML text and attributes.
std::string EscapeHtml(const std::string& s);

}  // namespace goodput::report
