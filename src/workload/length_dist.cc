#include "workload/length_dist.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <sstream>

#include <fmt/format.h>

#include "core/json_file.h"
#include "core/stats.h"
#include "core/text.h"
#include "core/units.h"

namespace goodput {
namespace {

// Parametric forms are held as this many equal-weight quantile points.
constexpr int kQuantilePoints = 1024;
// Segments wider than this are evaluated at this many points in Expect().
constexpr int kExpectPoints = 64;

std::string TooLong(int64_t length) {
  return fmt::format("a length of {} tokens is over the limit of {} (16M, beyond any model's context window)", length,
                     kMaxTokenLength);
}

Result<double> ParseNumber(const std::string& text, const std::string& where) {
  try {
    size_t used = 0;
    const double v = std::stod(text, &used);
    if (used == text.size() && std::isfinite(v)) return v;
  } catch (const std::exception&) {
  }
  return Status::InvalidArgument(fmt::format("{}: '{}' is not a number", where, text));
}

// "0-200k" -> [0, 200000]; the low end may be 0.
Status ParseRange(const std::string& text, int64_t* lo, int64_t* hi) {
  const size_t dash = text.find('-');
  if (dash == std::string::npos) return Status::InvalidArgument(fmt::format("'{}' must be a range like 1k-4k", text));
  const std::string a = std::string(Trim(text.substr(0, dash))), b = std::string(Trim(text.substr(dash + 1)));
  auto l = a == "0" ? Result<int64_t>(int64_t{0}) : ParseTokenCount(a);
  auto h = ParseTokenCount(b);
  if (!l.ok()) return l.status();
  if (!h.ok()) return h.status();
  if (*h <= *l) return Status::InvalidArgument(fmt::format("range '{}' needs low < high", text));
  *lo = *l;
  *hi = *h;
  return Status::Ok();
}

using Segments = std::vector<std::pair<std::pair<int64_t, int64_t>, double>>;

Result<Segments> ParseHistogram(const std::vector<std::string>& parts) {
  Segments segs;
  double total = 0;
  for (const auto& part : parts) {
    const size_t colon = part.find(':');
    if (colon == std::string::npos)
      return Status::InvalidArgument(fmt::format("histogram bin '{}' must look like 0-200k:0.7", part));
    int64_t lo = 0, hi = 0;
    if (Status st = ParseRange(part.substr(0, colon), &lo, &hi); !st.ok()) {
      return st.WithContext(fmt::format("bin '{}'", part));
    }
    auto w = ParseNumber(std::string(Trim(part.substr(colon + 1))), fmt::format("bin '{}': weight", part));
    if (!w.ok()) return w.status();
    if (*w < 0) return Status::InvalidArgument(fmt::format("bin '{}': weight must be >= 0", part));
    segs.push_back({{std::max<int64_t>(1, lo), hi}, *w});
    total += *w;
  }
  if (!(total > 0)) return Status::InvalidArgument("histogram weights sum to zero");
  return segs;
}

Result<Segments> ParseQuantiles(const std::vector<std::string>& parts) {
  std::vector<std::pair<double, int64_t>> q;
  for (const auto& part : parts) {
    const size_t eq = part.find('=');
    if (part.size() < 3 || (part[0] != 'p' && part[0] != 'P') || eq == std::string::npos) {
      return Status::InvalidArgument(fmt::format("quantile '{}' must look like p90=8k", part));
    }
    auto p = ParseNumber(part.substr(1, eq - 1), fmt::format("quantile '{}': percentile", part));
    if (!p.ok()) return p.status();
    auto len = ParseTokenCount(part.substr(eq + 1));
    if (!len.ok()) return len.status().WithContext(fmt::format("quantile '{}'", part));
    if (*p < 0 || *p > 100)
      return Status::InvalidArgument(fmt::format("quantile '{}': percentile outside 0..100", part));
    q.emplace_back(*p, *len);
  }
  std::sort(q.begin(), q.end());
  if (q.front().first > 0) q.insert(q.begin(), {0.0, 1});
  if (q.back().first != 100) return Status::InvalidArgument("quantile spec must end at p100 (the longest length)");
  Segments segs;
  for (size_t i = 1; i < q.size(); ++i) {
    if (q[i].second < q[i - 1].second || q[i].first == q[i - 1].first) {
      return Status::InvalidArgument("quantile lengths must not decrease and percentiles must differ");
    }
    segs.push_back({{q[i - 1].second, q[i].second}, (q[i].first - q[i - 1].first) / 100.0});
  }
  return segs;
}

// Equal-weight points at the distribution's quantiles (i + 0.5) / n.
Segments FromQuantileFunction(const std::function<double(double)>& quantile) {
  Segments segs;
  for (int i = 0; i < kQuantilePoints; ++i) {
    const auto v = std::max<int64_t>(1, std::llround(quantile((i + 0.5) / kQuantilePoints)));
    segs.push_back({{v, v}, 1.0 / kQuantilePoints});
  }
  return segs;
}

Result<Segments> ParseParametric(const std::string& kind, const std::string& args) {
  const auto parts = Split(args, ',');
  if (kind == "uniform") {
    int64_t lo = 0, hi = 0;
    if (Status st = ParseRange(args, &lo, &hi); !st.ok()) return st;
    return Segments{{{std::max<int64_t>(1, lo), hi}, 1.0}};
  }
  if (parts.size() != 2) return Status::InvalidArgument(fmt::format("{} needs two values: {}:MEAN,SPREAD", kind, kind));
  auto mean = ParseTokenCount(parts[0]);
  if (!mean.ok()) return mean.status();
  auto spread = ParseNumber(parts[1], kind + " spread");
  if (!spread.ok()) return spread.status();
  if (*spread <= 0) return Status::InvalidArgument(fmt::format("{}: the spread must be positive", kind));
  const double m = static_cast<double>(*mean), s = *spread;
  if (kind == "normal") return FromQuantileFunction([=](double p) { return m + s * NormalQuantile(p); });
  // Lognormal with the given mean: mu = ln(mean) - sigma^2 / 2.
  const double mu = std::log(m) - s * s / 2;
  return FromQuantileFunction([=](double p) { return std::exp(mu + s * NormalQuantile(p)); });
}

}  // namespace

LengthDistribution LengthDistribution::FromSegments(std::vector<Segment> segments, std::string description,
                                                    size_t samples) {
  std::sort(segments.begin(), segments.end(), [](const Segment& a, const Segment& b) {
    return a.lo != b.lo ? a.lo < b.lo : a.hi < b.hi;
  });
  double total = 0;
  for (const auto& s : segments) total += s.weight;
  LengthDistribution d;
  double cum = 0;
  for (auto s : segments) {
    s.weight /= total;
    cum += s.weight;
    d.segments_.push_back(s);
    d.cumulative_.push_back(cum);
  }
  d.description_ = std::move(description);
  d.n_samples_ = samples;
  return d;
}

Result<LengthDistribution> LengthDistribution::FromSamples(const std::vector<int64_t>& lengths,
                                                           std::string description) {
  if (lengths.empty()) return Status::InvalidArgument(description + ": no lengths");
  std::vector<int64_t> sorted = lengths;
  std::sort(sorted.begin(), sorted.end());
  if (sorted.back() > kMaxTokenLength) {
    return Status::InvalidArgument(fmt::format("{}: {}", description, TooLong(sorted.back())));
  }
  std::vector<Segment> segs;
  for (size_t i = 0; i < sorted.size();) {
    size_t j = i;
    while (j < sorted.size() && sorted[j] == sorted[i]) ++j;
    segs.push_back({sorted[i], sorted[i], static_cast<double>(j - i)});
    i = j;
  }
  return FromSegments(std::move(segs), std::move(description), lengths.size());
}

Result<LengthDistribution> LengthDistribution::FromFile(const std::string& path) {
  GOODPUT_ASSIGN_OR_RETURN(const std::string text, ReadTextFile(path, "lengths file"));
  std::istringstream in(text);
  std::vector<int64_t> lengths;
  std::string line;
  for (int lineno = 1; std::getline(in, line); ++lineno) {
    const std::string t(Trim(std::string_view(line).substr(0, line.find('#'))));
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
    if (v > kMaxTokenLength) return Status::InvalidArgument(fmt::format("{}:{}: {}", path, lineno, TooLong(v)));
    lengths.push_back(v);
  }
  if (lengths.empty()) return Status::InvalidArgument(fmt::format("{}: no lengths in the file", path));
  return FromSamples(lengths, fmt::format("{} ({} requests)", path, lengths.size()));
}

Result<LengthDistribution> LengthDistribution::FromSpec(const std::string& spec_in) {
  const std::string spec = std::string(Trim(spec_in));
  if (spec.empty()) return Status::InvalidArgument("empty length distribution");
  Result<Segments> segs = Status::InvalidArgument("unparsed");
  const size_t colon = spec.find(':');
  const std::string kind = colon == std::string::npos ? "" : spec.substr(0, colon);
  if (kind == "fixed") {
    auto len = ParseTokenCount(spec.substr(6));
    segs = len.ok() ? Result<Segments>(Segments{{{*len, *len}, 1.0}}) : Result<Segments>(len.status());
  } else if (kind == "uniform" || kind == "normal" || kind == "lognormal") {
    segs = ParseParametric(kind, spec.substr(colon + 1));
  } else {
    const auto parts = Split(spec, ',');
    segs = parts[0][0] == 'p' || parts[0][0] == 'P' ? ParseQuantiles(parts) : ParseHistogram(parts);
  }
  if (!segs.ok()) return segs.status().WithContext(fmt::format("length distribution '{}'", spec));
  std::vector<Segment> out;
  for (const auto& [range, w] : *segs) {
    if (range.second > kMaxTokenLength) {
      return Status::InvalidArgument(fmt::format("length distribution '{}': {}", spec, TooLong(range.second)));
    }
    out.push_back({range.first, range.second, w});
  }
  return FromSegments(std::move(out), spec, 0);
}

int64_t LengthDistribution::Sample(std::mt19937_64& rng) const {
  const double u = std::uniform_real_distribution<double>(0.0, 1.0)(rng);
  size_t i = std::lower_bound(cumulative_.begin(), cumulative_.end(), u) - cumulative_.begin();
  i = std::min(i, segments_.size() - 1);
  const Segment& s = segments_[i];
  if (s.lo == s.hi) return s.lo;
  return std::uniform_int_distribution<int64_t>(s.lo, s.hi)(rng);
}

double LengthDistribution::Expect(const std::function<double(int64_t)>& f) const {
  double sum = 0;
  for (const auto& s : segments_) {
    const int64_t span = s.hi - s.lo;
    const int n = static_cast<int>(std::min<int64_t>(kExpectPoints, span + 1));
    double part = 0;
    for (int i = 0; i < n; ++i) {
      const double frac = n == 1 ? 0.0 : static_cast<double>(i) / (n - 1);
      part += f(s.lo + std::llround(frac * static_cast<double>(span)));
    }
    sum += s.weight * part / n;
  }
  return sum;
}

double LengthDistribution::Mean() const {
  double sum = 0;
  for (const auto& s : segments_) sum += s.weight * (static_cast<double>(s.lo) + static_cast<double>(s.hi)) / 2;
  return sum;
}

int64_t LengthDistribution::Quantile(double q) const {
  size_t i = std::lower_bound(cumulative_.begin(), cumulative_.end(), q - 1e-12) - cumulative_.begin();
  i = std::min(i, segments_.size() - 1);
  const Segment& s = segments_[i];
  const double before = i == 0 ? 0.0 : cumulative_[i - 1];
  const double frac = s.weight > 0 ? std::clamp((q - before) / s.weight, 0.0, 1.0) : 0.0;
  return s.lo + std::llround(frac * static_cast<double>(s.hi - s.lo));
}

int64_t LengthDistribution::Max() const {
  int64_t m = 0;
  for (const auto& s : segments_) m = std::max(m, s.hi);
  return m;
}

LengthDistribution LengthDistribution::CappedAt(int64_t max_len) const {
  std::vector<Segment> out;
  for (const auto& s : segments_) {
    if (s.lo >= max_len) {
      out.push_back({max_len, max_len, s.weight});
    } else if (s.hi > max_len) {  // split the segment at the cap, keeping the weight per token
      const double below = static_cast<double>(max_len - s.lo) / static_cast<double>(s.hi - s.lo);
      out.push_back({s.lo, max_len, s.weight * below});
      out.push_back({max_len, max_len, s.weight * (1 - below)});
    } else {
      out.push_back(s);
    }
  }
  return FromSegments(std::move(out), description_, n_samples_);
}

}  // namespace goodput
