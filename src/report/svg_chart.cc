#include "report/svg_chart.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace goodput::report {
namespace {

// The plot's box; the legend starts kLegendGap to its right.
constexpr double kLeft = 76, kPlotW = 420, kTop = 36, kPlotH = 276, kBottom = 48, kLegendGap = 12;
constexpr double kRow = 16;      // legend row pitch: 11 px text is ~13 px tall
constexpr double kCharW = 6.6;   // a generous width of one 11 px sans-serif character
const char* const kColors[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf"};
// SLO lines: dark and dotted, a colour and dash no series uses.
constexpr char kSloStyle[] = "stroke='#333' stroke-width='1.5' stroke-dasharray='2 3'";
constexpr char kCapacityColor[] = "#2ca02c";

// About five round tick values covering [lo, hi].
std::vector<double> Ticks(double lo, double hi) {
  if (!(hi > lo)) return {lo};
  const double raw = (hi - lo) / 5;
  const double mag = std::pow(10, std::floor(std::log10(raw)));
  double step = mag;
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    step = m * mag;
    if (step >= raw) break;
  }
  std::vector<double> out;
  for (double v = std::ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) out.push_back(v);
  return out;
}

std::string Num(double v) {
  if (v != 0 && (std::fabs(v) < 0.01 || std::fabs(v) >= 1e5)) return fmt::format("{:.2g}", v);
  return fmt::format("{:.4g}", v);
}

struct Scale {
  double x0, x1, y0, y1;
  bool log_x;
  double X(double x) const {
    const double a = log_x ? std::log2(std::max(x, 1e-12)) : x, lo = log_x ? std::log2(x0) : x0,
                 hi = log_x ? std::log2(x1) : x1;
    return kLeft + (hi > lo ? (a - lo) / (hi - lo) : 0.5) * kPlotW;
  }
  double Y(double y) const { return kTop + kPlotH - (y1 > y0 ? (y - y0) / (y1 - y0) : 0.5) * kPlotH; }
};

// Every finite x the chart shows: its points and its vertical lines.
std::vector<double> Xs(const LineChart& c) {
  std::vector<double> xs;
  for (const auto& ser : c.series) {
    for (auto [x, y] : ser.points) {
      if (std::isfinite(x) && std::isfinite(y)) xs.push_back(x);
    }
  }
  for (const Marker& m : c.verticals) {
    if (std::isfinite(m.value)) xs.push_back(m.value);
  }
  std::sort(xs.begin(), xs.end());
  xs.erase(std::unique(xs.begin(), xs.end()), xs.end());
  return xs;
}

Scale ScaleFor(const LineChart& c) {
  const std::vector<double> xs = Xs(c);
  Scale s{xs.empty() ? 1 : xs.front(), xs.empty() ? 2 : xs.back(), 0, 0, c.log_x};
  if (s.log_x && s.x0 <= 0) s.log_x = false;
  if (!s.log_x && s.x0 > 0) s.x0 = 0;  // a latency or a speed axis starts at 0
  for (const auto& ser : c.series) {
    for (auto [x, y] : ser.points) {
      if (std::isfinite(x) && std::isfinite(y)) s.y1 = std::max(s.y1, y);
    }
    for (const auto& b : ser.band) {
      if (std::isfinite(b[2])) s.y1 = std::max(s.y1, b[2]);
    }
  }
  for (const auto& t : c.thresholds) s.y1 = std::max(s.y1, t.value);
  if (!(s.y1 > 0)) s.y1 = 1;
  s.y1 *= 1.08;
  return s;
}

// Log axes tick the measured loads themselves, leaving out any whose label
// would come within 8 px of the one before; linear axes tick round values.
std::vector<double> XTicks(const LineChart& c, const Scale& s) {
  if (!s.log_x) return Ticks(s.x0, s.x1);
  std::vector<double> out;
  for (double x : Xs(c)) {
    const double room = out.empty() ? 0 : kCharW * static_cast<double>(Num(x).size() + Num(out.back()).size()) / 2 + 8;
    if (out.empty() || s.X(x) - s.X(out.back()) >= room) out.push_back(x);
  }
  return out;
}

std::string Axes(const LineChart& c, const Scale& s) {
  std::string out;
  const double bottom = kTop + kPlotH;
  for (double x : XTicks(c, s)) {
    out += fmt::format("<line x1='{0:.1f}' x2='{0:.1f}' y1='{1}' y2='{2}' stroke='#eee'/>"
                       "<text x='{0:.1f}' y='{3}' text-anchor='middle' font-size='11'>{4}</text>",
                       s.X(x), kTop, bottom, bottom + 15, Num(x));
  }
  for (double y : Ticks(0, s.y1)) {
    out += fmt::format("<line x1='{0}' x2='{1}' y1='{2:.1f}' y2='{2:.1f}' stroke='#eee'/>"
                       "<text x='{3}' y='{4:.1f}' text-anchor='end' font-size='11'>{5}</text>",
                       kLeft, kLeft + kPlotW, s.Y(y), kLeft - 6, s.Y(y) + 4, Num(y));
  }
  out += fmt::format("<rect x='{}' y='{}' width='{}' height='{}' fill='none' stroke='#888'/>", kLeft, kTop, kPlotW,
                     kPlotH);
  out += fmt::format("<text x='{}' y='{}' text-anchor='middle' font-size='12'>{}</text>", kLeft + kPlotW / 2,
                     bottom + kBottom - 10, EscapeHtml(c.x_label));
  out += fmt::format("<text x='13' y='{0}' text-anchor='middle' font-size='12' "
                     "transform='rotate(-90 13 {0})'>{1}</text>",
                     kTop + kPlotH / 2, EscapeHtml(c.y_label));
  out += fmt::format("<text x='{}' y='20' font-size='14' font-weight='bold'>{}</text>", kLeft, EscapeHtml(c.title));
  return out;
}

// One legend row: a sample of the line's style, then its name.
struct LegendRow {
  std::string sample;  // SVG drawn at the row's origin (translated)
  std::string text;
  std::string color = "#222";
};

std::string SeriesStyle(const Series& ser, const char* color) {
  return fmt::format("stroke='{}' stroke-width='2'{}", color, ser.dashed ? " stroke-dasharray='6 3'" : "");
}

std::vector<LegendRow> Legend(const LineChart& c) {
  std::vector<LegendRow> rows;
  for (size_t i = 0; i < c.series.size(); ++i) {
    const char* color = kColors[i % std::size(kColors)];
    std::string sample = fmt::format("<line x1='0' x2='20' y1='-4' y2='-4' {}/>", SeriesStyle(c.series[i], color));
    if (c.series[i].markers) sample += fmt::format("<circle cx='10' cy='-4' r='3' fill='{}'/>", color);
    rows.push_back({sample, c.series[i].name, color});
  }
  for (const auto* lines : {&c.thresholds, &c.verticals}) {
    for (const Marker& m : *lines) {
      if (!m.capacity) rows.push_back({fmt::format("<line x1='0' x2='20' y1='-4' y2='-4' {}/>", kSloStyle), m.label});
    }
  }
  return rows;
}

double LegendWidth(const std::vector<LegendRow>& rows) {
  size_t chars = 0;
  for (const LegendRow& r : rows) chars = std::max(chars, r.text.size());
  return 26 + kCharW * static_cast<double>(chars);
}

std::string RenderLegend(const std::vector<LegendRow>& rows) {
  std::string out = "<g class='legend'>";
  const double x = kLeft + kPlotW + kLegendGap;
  for (size_t i = 0; i < rows.size(); ++i) {
    const double y = kTop + 12 + kRow * static_cast<double>(i);
    out += fmt::format("<g transform='translate({},{})'>{}</g><text x='{}' y='{}' font-size='11' fill='{}'>{}</text>",
                       x, y, rows[i].sample, x + 26, y, rows[i].color, EscapeHtml(rows[i].text));
  }
  return out + "</g>";
}

std::string RenderLines(const LineChart& c, const Scale& s) {
  std::string out;
  for (const Marker& t : c.thresholds) {
    out += fmt::format("<line class='threshold' data-label='{}' data-value='{}' x1='{}' x2='{}' y1='{:.1f}' "
                       "y2='{:.1f}' {}/>",
                       EscapeHtml(t.label), t.value, kLeft, kLeft + kPlotW, s.Y(t.value), s.Y(t.value), kSloStyle);
  }
  for (const Marker& v : c.verticals) {
    const double x = s.X(v.value);
    if (!v.capacity) {
      out += fmt::format("<line class='threshold' data-label='{}' data-value='{}' x1='{:.1f}' x2='{:.1f}' y1='{}' "
                         "y2='{}' {}/>",
                         EscapeHtml(v.label), v.value, x, x, kTop, kTop + kPlotH, kSloStyle);
      continue;
    }
    // The label on the side of the line with room: right of it in the
    // plot's left half, left of it in the right half.
    const bool right = x < kLeft + kPlotW / 2;
    out += fmt::format("<line class='marker' data-label='{0}' data-value='{1}' x1='{2:.1f}' x2='{2:.1f}' y1='{3}' "
                       "y2='{4}' stroke='{5}' stroke-width='2'/><text x='{6:.1f}' y='{7}' font-size='11' "
                       "text-anchor='{8}' fill='{5}'>{0}</text>",
                       EscapeHtml(v.label), v.value, x, kTop, kTop + kPlotH, kCapacityColor, right ? x + 4 : x - 4,
                       kTop + 12, right ? "start" : "end");
  }
  return out;
}

std::string RenderBand(const Series& ser, const Scale& s, const char* color) {
  std::string upper, lower;
  for (const auto& [x, lo, hi] : ser.band) {
    if (!std::isfinite(x) || !std::isfinite(lo) || !std::isfinite(hi)) continue;
    upper += fmt::format("{:.1f},{:.1f} ", s.X(x), s.Y(hi));
    lower = fmt::format("{:.1f},{:.1f} ", s.X(x), s.Y(lo)) + lower;
  }
  if (upper.empty()) return "";
  return fmt::format("<polygon class='band' data-series='{}' points='{}{}' fill='{}' fill-opacity='0.15' "
                     "stroke='{}' stroke-opacity='0.3'/>",
                     EscapeHtml(ser.name), upper, lower, color, color);
}

std::string RenderSeries(const Series& ser, const Scale& s, const char* color) {
  std::string data, pixels, dots;
  for (auto [x, y] : ser.points) {
    if (!std::isfinite(x) || !std::isfinite(y)) continue;
    data += fmt::format("{}{},{}", data.empty() ? "" : " ", x, y);
    pixels += fmt::format("{:.1f},{:.1f} ", s.X(x), s.Y(y));
    if (ser.markers) {
      dots += fmt::format("<circle class='point' cx='{:.1f}' cy='{:.1f}' r='3' fill='{}'><title>{}: {}, {}</title>"
                          "</circle>",
                          s.X(x), s.Y(y), color, EscapeHtml(ser.name), Num(x), Num(y));
    }
  }
  return RenderBand(ser, s, color) +
         fmt::format("<polyline class='series' data-series='{}' data-points='{}' points='{}' fill='none' {}/>",
                     EscapeHtml(ser.name), data, pixels, SeriesStyle(ser, color)) +
         dots;
}

}  // namespace

std::string EscapeHtml(const std::string& s) {
  std::string out;
  for (char ch : s) {
    switch (ch) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += ch;
    }
  }
  return out;
}

LineChart MakeChart(std::string id, std::string title, std::string x_label, std::string y_label, bool log_x) {
  LineChart c;
  c.id = std::move(id);
  c.title = std::move(title);
  c.x_label = std::move(x_label);
  c.y_label = std::move(y_label);
  c.log_x = log_x;
  return c;
}

std::string RenderSvg(const LineChart& c) {
  const Scale s = ScaleFor(c);
  const std::vector<LegendRow> legend = Legend(c);
  const double width = std::max(640.0, kLeft + kPlotW + kLegendGap + LegendWidth(legend) + 8);
  const double height = std::max(kTop + kPlotH + kBottom, kTop + 12 + kRow * static_cast<double>(legend.size()));
  std::string out = fmt::format("<svg id='{}' xmlns='http://www.w3.org/2000/svg' width='{:.0f}' height='{:.0f}' "
                                "viewBox='0 0 {:.0f} {:.0f}' font-family='sans-serif'>",
                                EscapeHtml(c.id), width, height, width, height);
  out += Axes(c, s) + RenderLines(c, s);
  for (size_t i = 0; i < c.series.size(); ++i) out += RenderSeries(c.series[i], s, kColors[i % std::size(kColors)]);
  return out + RenderLegend(legend) + "</svg>";
}

}  // namespace goodput::report
