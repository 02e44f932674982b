#include "plan/lengths.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <fstream>
#include <map>

#include <fmt/format.h>

#include "core/units.h"

namespace goodput {
namespace {

// Points used to stand for one histogram bin or one quantile segment.
constexpr int kPointsPerSegment = 256;

std::string Trim(std::string s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
  size_t i = 0;
  while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
  return s.substr(i);
}

std::vector<std::string> SplitComma(const std::string& s) {
  std::vector<std::string> out;
  size_t start = 0;
  for (size_t i = 0; i <= s.size(); ++i) {
    if (i == s.size() || s[i] == ',') {
      out.push_back(Trim(s.substr(start, i - start)));
      start = i + 1;
    }
  }
  return out;
}

// Spreads `weight` evenly over lengths in [lo, hi].
void AddUniform(std::vector<std::pair<int64_t, double>>& pts, int64_t lo, int64_t hi, double weight) {
  const int64_t span = hi - lo;
  const int n = static_cast<int>(std::min<int64_t>(kPointsPerSegment, span + 1));
  for (int i = 0; i < n; ++i) {
    const double frac = n == 1 ? 0.5 : (i + 0.5) / n;
    const int64_t len = std::max<int64_t>(1, lo + static_cast<int64_t>(std::llround(frac * static_cast<double>(span))));
    pts.emplace_back(len, weight / n);
  }
}

Result<std::vector<std::pair<int64_t, double>>> ParseHistogram(const std::vector<std::string>& parts) {
  std::vector<std::pair<int64_t, double>> pts;
  double total = 0;
  for (const auto& part : parts) {
    const size_t colon = part.find(':');
    const size_t dash = part.find('-');
    if (colon == std::string::npos || dash == std::string::npos || dash > colon) {
      return Status::InvalidArgument(fmt::format("histogram bin '{}' must look like 0-200k:0.7", part));
    }
    auto lo = part.substr(0, dash) == "0" ? Result<int64_t>(int64_t{0}) : ParseTokenCount(part.substr(0, dash));
    auto hi = ParseTokenCount(part.substr(dash + 1, colon - dash - 1));
    if (!lo.ok()) return lo.status().WithContext(fmt::format("bin '{}'", part));
    if (!hi.ok()) return hi.status().WithContext(fmt::format("bin '{}'", part));
    double w = 0;
    try {
      size_t used = 0;
      w = std::stod(part.substr(colon + 1), &used);
      if (used != part.size() - colon - 1) throw std::invalid_argument("trailing");
    } catch (const std::exception&) {
      return Status::InvalidArgument(fmt::format("bin '{}': weight is not a number", part));
    }
    if (*hi <= *lo || w < 0 || !std::isfinite(w)) {
      return Status::InvalidArgument(fmt::format("bin '{}': needs low < high and a weight >= 0", part));
    }
    AddUniform(pts, std::max<int64_t>(1, *lo), *hi, w);
    total += w;
  }
  if (!(total > 0)) return Status::InvalidArgument("histogram weights sum to zero");
  for (auto& p : pts) p.second /= total;
  return pts;
}

Result<std::vector<std::pair<int64_t, double>>> ParseQuantiles(const std::vector<std::string>& parts) {
  std::vector<std::pair<double, int64_t>> q;  // (percentile, length)
  for (const auto& part : parts) {
    const size_t eq = part.find('=');
    if (part.size() < 3 || (part[0] != 'p' && part[0] != 'P') || eq == std::string::npos) {
      return Status::InvalidArgument(fmt::format("quantile '{}' must look like p90=8k", part));
    }
    double p = 0;
    try {
      size_t used = 0;
      p = std::stod(part.substr(1, eq - 1), &used);
      if (used != eq - 1) throw std::invalid_argument("trailing");
    } catch (const std::exception&) {
      return Status::InvalidArgument(fmt::format("quantile '{}': percentile is not a number", part));
    }
    auto len = ParseTokenCount(part.substr(eq + 1));
    if (!len.ok()) return len.status().WithContext(fmt::format("quantile '{}'", part));
    if (p < 0 || p > 100) return Status::InvalidArgument(fmt::format("quantile '{}': percentile outside 0..100", part));
    q.emplace_back(p, *len);
  }
  std::sort(q.begin(), q.end());
  if (q.front().first > 0) q.insert(q.begin(), {0.0, 1});
  if (q.back().first != 100) {
    return Status::InvalidArgument("quantile spec must end at p100 (the longest request)");
  }
  std::vector<std::pair<int64_t, double>> pts;
  for (size_t i = 1; i < q.size(); ++i) {
    if (q[i].second < q[i - 1].second || q[i].first == q[i - 1].first) {
      return Status::InvalidArgument("quantile lengths must not decrease and percentiles must differ");
    }
    AddUniform(pts, q[i - 1].second, q[i].second, (q[i].first - q[i - 1].first) / 100.0);
  }
  return pts;
}

}  // namespace

LengthDistribution LengthDistribution::FromPoints(std::vector<Point> points, std::string description,
                                                  size_t samples) {
  std::map<int64_t, double> merged;
  double total = 0;
  for (const auto& p : points) {
    merged[p.length] += p.weight;
    total += p.weight;
  }
  LengthDistribution d;
  for (const auto& [len, w] : merged) d.points_.push_back({len, w / total});
  d.description_ = std::move(description);
  d.n_samples_ = samples;
  return d;
}

Result<LengthDistribution> LengthDistribution::FromFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Status::NotFound(fmt::format("cannot read lengths file '{}'", path));
  std::vector<Point> pts;
  std::string line;
  for (int lineno = 1; std::getline(in, line); ++lineno) {
    const std::string t = Trim(line.substr(0, line.find('#')));
    if (t.empty()) continue;
    int64_t v = 0;
    size_t used = 0;
    try {
      v = std::stoll(t, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != t.size() || v <= 0) {
      return Status::InvalidArgument(
          fmt::format("{}:{}: '{}' is not a positive whole number of tokens", path, lineno, t));
    }
    pts.push_back({v, 1.0});
  }
  if (pts.empty()) return Status::InvalidArgument(fmt::format("{}: no lengths in the file", path));
  const size_t n = pts.size();
  return FromPoints(std::move(pts), fmt::format("{} ({} requests)", path, n), n);
}

Result<LengthDistribution> LengthDistribution::FromSpec(const std::string& spec_in) {
  const std::string spec = Trim(spec_in);
  if (spec.empty()) return Status::InvalidArgument("empty length distribution");
  std::vector<std::pair<int64_t, double>> raw;
  if (spec.rfind("fixed:", 0) == 0) {
    auto len = ParseTokenCount(spec.substr(6));
    if (!len.ok()) return len.status().WithContext("length distribution");
    raw.emplace_back(*len, 1.0);
  } else {
    const auto parts = SplitComma(spec);
    auto pts = parts[0].size() > 0 && (parts[0][0] == 'p' || parts[0][0] == 'P') ? ParseQuantiles(parts)
                                                                                  : ParseHistogram(parts);
    if (!pts.ok()) return pts.status().WithContext("length distribution");
    raw = std::move(*pts);
  }
  std::vector<Point> pts;
  for (const auto& [len, w] : raw) pts.push_back({len, w});
  return FromPoints(std::move(pts), spec, 0);
}

double LengthDistribution::Expect(const std::function<double(int64_t)>& f) const {
  double sum = 0;
  for (const auto& p : points_) sum += p.weight * f(p.length);
  return sum;
}

double LengthDistribution::Mean() const {
  return Expect([](int64_t l) { return static_cast<double>(l); });
}

int64_t LengthDistribution::Quantile(double q) const {
  double cum = 0;
  for (const auto& p : points_) {
    cum += p.weight;
    if (cum >= q - 1e-12) return p.length;
  }
  return points_.back().length;
}

int64_t LengthDistribution::Max() const { return points_.back().length; }

LengthDistribution LengthDistribution::CappedAt(int64_t max_len) const {
  std::vector<Point> pts;
  for (const auto& p : points_) pts.push_back({std::min(p.length, max_len), p.weight});
  return FromPoints(std::move(pts), description_, n_samples_);
}

}  // namespace goodput
