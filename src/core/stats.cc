#include "core/stats.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace goodput {
namespace {

double SortedPercentile(const std::vector<double>& sorted, double p) {
  const double clamped = std::clamp(p, 0.0, 100.0);
  const double rank = clamped / 100.0 * static_cast<double>(sorted.size() - 1);
  const auto lo = static_cast<size_t>(std::floor(rank));
  const auto hi = static_cast<size_t>(std::ceil(rank));
  const double frac = rank - static_cast<double>(lo);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * frac;
}

}  // namespace

std::optional<double> Percentile(std::vector<double> values, double p) {
  if (values.empty()) return std::nullopt;
  std::sort(values.begin(), values.end());
  return SortedPercentile(values, p);
}

std::vector<std::optional<double>> Percentiles(std::vector<double> values,
                                               const std::vector<double>& ps) {
  std::vector<std::optional<double>> out(ps.size());
  if (values.empty()) return out;
  std::sort(values.begin(), values.end());
  for (size_t i = 0; i < ps.size(); ++i) out[i] = SortedPercentile(values, ps[i]);
  return out;
}

std::optional<double> Mean(const std::vector<double>& values) {
  if (values.empty()) return std::nullopt;
  return std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(values.size());
}

// Bisection on std::erfc: no coefficient table, and precise far below what
// lengths or concurrency estimates need.
double NormalQuantile(double p) {
  double lo = -40, hi = 40;
  for (int i = 0; i < 200; ++i) {
    const double mid = (lo + hi) / 2;
    if (0.5 * std::erfc(-mid / std::sqrt(2.0)) < p) lo = mid;
    else hi = mid;
  }
  return (lo + hi) / 2;
}

std::optional<double> Median(std::vector<double> values) { return Percentile(std::move(values), 50); }

Interval WilsonInterval(int64_t successes, int64_t trials, double confidence) {
  if (trials <= 0) return Interval{0, 1};
  const double n = static_cast<double>(trials), k = static_cast<double>(successes);
  const double z = NormalQuantile(1 - (1 - confidence) / 2), z2 = z * z;
  const double center = (k + z2 / 2) / (n + z2);
  const double half = z / (n + z2) * std::sqrt(k * (n - k) / n + z2 / 4);
  return Interval{std::max(0.0, center - half), std::min(1.0, center + half)};
}

int64_t MinTrialsToShow(double required, double confidence) {
  if (required >= 1) return INT64_MAX;
  if (required <= 0) return 1;
  const double z = NormalQuantile(1 - (1 - confidence) / 2);
  // n / (n + z^2) >= p  <=>  n >= z^2 p / (1 - p); the small epsilon keeps an
  // exact integer bound from rounding up past itself.
  return std::max<int64_t>(1, static_cast<int64_t>(std::ceil(z * z * required / (1 - required) - 1e-9)));
}

Interval PercentileInterval(std::vector<double> values, double p, double confidence) {
  const double inf = std::numeric_limits<double>::infinity();
  const int64_t n = static_cast<int64_t>(values.size());
  if (n == 0) return Interval{-inf, inf};
  std::sort(values.begin(), values.end());
  const double q = p / 100, tail = (1 - confidence) / 2;
  // cdf[k] = P(B <= k), its terms kept in log space (q^n underflows for
  // large n): log pmf(k + 1) = log pmf(k) + log((n - k) / (k + 1)) + log(q / (1 - q)).
  std::vector<double> cdf(static_cast<size_t>(n) + 1);
  const double odds = std::log(q) - std::log1p(-q);
  double log_pmf = static_cast<double>(n) * std::log1p(-q), sum = 0;
  for (int64_t k = 0; k <= n; ++k) {
    sum += std::exp(log_pmf);
    cdf[static_cast<size_t>(k)] = sum;
    log_pmf += std::log(static_cast<double>(n - k) / static_cast<double>(k + 1)) + odds;
  }
  int64_t l = 0;  // 1-based rank; 0: below the sample
  while (l + 1 <= n && cdf[static_cast<size_t>(l)] <= tail) ++l;
  int64_t u = 1;
  while (u <= n && cdf[static_cast<size_t>(u - 1)] < 1 - tail) ++u;
  return Interval{l >= 1 ? values[static_cast<size_t>(l - 1)] : -inf, u <= n ? values[static_cast<size_t>(u - 1)] : inf};
}

}  // namespace goodput
