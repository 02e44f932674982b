#include "report/svg_chart.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace goodput::report {
namespace {

constexpr double kW = 640, kH = 360, kLeft = 70, kRight = 150, kTop = 36, kBottom = 48;
const char* const kColors[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf"};

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
    return kLeft + (hi > lo ? (a - lo) / (hi - lo) : 0.5) * (kW - kLeft - kRight);
  }
  double Y(double y) const { return kH - kBottom - (y1 > y0 ? (y - y0) / (y1 - y0) : 0.5) * (kH - kTop - kBottom); }
};

Scale ScaleFor(const LineChart& c) {
  Scale s{INFINITY, -INFINITY, 0, -INFINITY, c.log_x};
  for (const auto& ser : c.series) {
    for (auto [x, y] : ser.points) {
      if (!std::isfinite(x) || !std::isfinite(y)) continue;
      s.x0 = std::min(s.x0, x);
      s.x1 = std::max(s.x1, x);
      s.y1 = std::max(s.y1, y);
    }
  }
  for (const auto& t : c.thresholds) s.y1 = std::max(s.y1, t.value);
  if (!std::isfinite(s.x0)) s = Scale{1, 2, 0, 1, c.log_x};
  if (s.log_x && s.x0 <= 0) s.log_x = false;
  if (!(s.y1 > 0)) s.y1 = 1;
  s.y1 *= 1.08;
  return s;
}

std::string Axes(const LineChart& c, const Scale& s) {
  std::string out;
  std::vector<double> xs;
  if (s.log_x) {
    for (double v = std::exp2(std::ceil(std::log2(s.x0))); v <= s.x1 * 1.0001; v *= 2) xs.push_back(v);
  } else {
    xs = Ticks(s.x0, s.x1);
  }
  for (double x : xs) {
    out += fmt::format("<line x1='{0:.1f}' x2='{0:.1f}' y1='{1}' y2='{2}' stroke='#eee'/>"
                       "<text x='{0:.1f}' y='{3}' text-anchor='middle' font-size='11'>{4}</text>",
                       s.X(x), kTop, kH - kBottom, kH - kBottom + 15, Num(x));
  }
  for (double y : Ticks(0, s.y1)) {
    out += fmt::format("<line x1='{0}' x2='{1}' y1='{2:.1f}' y2='{2:.1f}' stroke='#eee'/>"
                       "<text x='{3}' y='{4:.1f}' text-anchor='end' font-size='11'>{5}</text>",
                       kLeft, kW - kRight, s.Y(y), kLeft - 6, s.Y(y) + 4, Num(y));
  }
  out += fmt::format("<rect x='{}' y='{}' width='{}' height='{}' fill='none' stroke='#888'/>", kLeft, kTop,
                     kW - kLeft - kRight, kH - kTop - kBottom);
  out += fmt::format("<text x='{}' y='{}' text-anchor='middle' font-size='12'>{}</text>", (kLeft + kW - kRight) / 2,
                     kH - 10, EscapeHtml(c.x_label));
  out += fmt::format("<text x='14' y='{0}' text-anchor='middle' font-size='12' transform='rotate(-90 14 {0})'>{1}</text>",
                     (kTop + kH - kBottom) / 2, EscapeHtml(c.y_label));
  out += fmt::format("<text x='{}' y='20' font-size='14' font-weight='bold'>{}</text>", kLeft, EscapeHtml(c.title));
  return out;
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
  std::string out = fmt::format("<svg id='{}' xmlns='http://www.w3.org/2000/svg' width='{}' height='{}' "
                                "viewBox='0 0 {} {}' font-family='sans-serif'>",
                                EscapeHtml(c.id), kW, kH, kW, kH);
  out += Axes(c, s);
  for (size_t i = 0; i < c.thresholds.size(); ++i) {
    const Marker& t = c.thresholds[i];
    out += fmt::format("<line class='threshold' data-label='{0}' data-value='{1}' x1='{2}' x2='{3}' y1='{4:.1f}' "
                       "y2='{4:.1f}' stroke='#d62728' stroke-dasharray='6 4'/><text x='{5}' y='{6:.1f}' "
                       "font-size='11' fill='#d62728'>{0}</text>",
                       EscapeHtml(t.label), t.value, kLeft, kW - kRight, s.Y(t.value), kW - kRight + 6,
                       s.Y(t.value) + 4 + 12.0 * static_cast<double>(i % 2));
  }
  if (c.vertical) {
    const double x = s.X(c.vertical->value);
    out += fmt::format("<line class='marker' data-label='{0}' data-value='{1}' x1='{2:.1f}' x2='{2:.1f}' y1='{3}' "
                       "y2='{4}' stroke='#2ca02c' stroke-width='2'/><text x='{5:.1f}' y='{6}' font-size='11' "
                       "fill='#2ca02c'>{0}</text>",
                       EscapeHtml(c.vertical->label), c.vertical->value, x, kTop, kH - kBottom, x + 4, kTop + 12);
  }
  for (size_t i = 0; i < c.series.size(); ++i) {
    const Series& ser = c.series[i];
    const char* color = kColors[i % std::size(kColors)];
    std::string data, pixels;
    for (auto [x, y] : ser.points) {
      if (!std::isfinite(x) || !std::isfinite(y)) continue;
      data += fmt::format("{}{},{}", data.empty() ? "" : " ", x, y);
      pixels += fmt::format("{:.1f},{:.1f} ", s.X(x), s.Y(y));
    }
    out += fmt::format("<polyline class='series' data-series='{}' data-points='{}' points='{}' fill='none' "
                       "stroke='{}' stroke-width='2'{}/>",
                       EscapeHtml(ser.name), data, pixels, color, ser.dashed ? " stroke-dasharray='4 3'" : "");
    out += fmt::format("<text x='{}' y='{}' font-size='11' fill='{}'>{}</text>", kW - kRight + 6,
                       kTop + 40 + 14.0 * static_cast<double>(i), color, EscapeHtml(ser.name));
  }
  return out + "</svg>";
}

}  // namespace goodput::report
