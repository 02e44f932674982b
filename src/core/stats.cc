#include "core/stats.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <utility>

namespace goodput {
namespace {
double Rank(size_t n, double p) { return std::clamp(p, 0.0, 100.0) / 100.0 * static_cast<double>(n - 1); }
}  // namespace

std::pair<size_t, size_t> PercentileIndices(size_t n, double p) {
  const double rank = Rank(n, p);
  return {static_cast<size_t>(std::floor(rank)), static_cast<size_t>(std::ceil(rank))};
}

double PercentileOfSorted(const std::vector<double>& sorted, double p) {
  const auto [lo, hi] = PercentileIndices(sorted.size(), p);
  const double frac = Rank(sorted.size(), p) - static_cast<double>(lo);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * frac;
}

void SelectRanks(std::vector<double>& values, std::vector<size_t> ranks) {
  std::sort(ranks.begin(), ranks.end());
  ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
  // Each rank's nth_element leaves everything before it no larger and after it no smaller,
  // so the ranks below and above it are selected within those two spans.
  struct Span {
    size_t first, last, rank_lo, rank_hi;  // values [first, last), ranks [rank_lo, rank_hi)
  };
  std::vector<Span> todo = {{0, values.size(), 0, ranks.size()}};
  while (!todo.empty()) {
    const Span s = todo.back();
    todo.pop_back();
    if (s.rank_lo >= s.rank_hi) continue;
    const size_t mid = s.rank_lo + (s.rank_hi - s.rank_lo) / 2;
    const auto nth = values.begin() + static_cast<std::ptrdiff_t>(ranks[mid]);
    std::nth_element(values.begin() + static_cast<std::ptrdiff_t>(s.first), nth,
                     values.begin() + static_cast<std::ptrdiff_t>(s.last));
    todo.push_back({s.first, ranks[mid], s.rank_lo, mid});
    todo.push_back({ranks[mid] + 1, s.last, mid + 1, s.rank_hi});
  }
}

std::optional<double> Percentile(std::vector<double> values, double p) {
  if (values.empty()) return std::nullopt;
  std::sort(values.begin(), values.end());
  return PercentileOfSorted(values, p);
}

std::vector<std::optional<double>> Percentiles(std::vector<double> values,
                                               const std::vector<double>& ps) {
  std::vector<std::optional<double>> out(ps.size());
  if (values.empty()) return out;
  std::sort(values.begin(), values.end());
  for (size_t i = 0; i < ps.size(); ++i) out[i] = PercentileOfSorted(values, ps[i]);
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

namespace {

// The 0-based ranks {first k with P(B <= k) > tail, first k with
// P(B <= k) >= 1 - tail} for B ~ Binomial(n, q). Only terms within 12
// standard deviations of n q are summed (the rest hold < 1e-30 of the mass),
// the first from lgamma, the others by the ratio of neighbours, so a sample
// of a million token gaps costs a few thousand terms.
std::pair<int64_t, int64_t> BinomialTailRanks(int64_t n, double q, double tail) {
  const double mean = static_cast<double>(n) * q, sd = std::sqrt(mean * (1 - q));
  const int64_t k0 = std::max<int64_t>(0, static_cast<int64_t>(std::floor(mean - 12 * sd - 2)));
  const int64_t k1 = std::min<int64_t>(n, static_cast<int64_t>(std::ceil(mean + 12 * sd + 2)));
  const double odds = std::log(q) - std::log1p(-q);
  double log_pmf = std::lgamma(n + 1.0) - std::lgamma(k0 + 1.0) - std::lgamma(static_cast<double>(n - k0) + 1) +
                   static_cast<double>(k0) * std::log(q) + static_cast<double>(n - k0) * std::log1p(-q);
  int64_t low = -1, high = -1;
  double cdf = 0;
  for (int64_t k = k0; k <= k1 && high < 0; ++k) {
    cdf += std::exp(log_pmf);
    if (low < 0 && cdf > tail) low = k;
    if (cdf >= 1 - tail) high = k;
    log_pmf += std::log(static_cast<double>(n - k) / static_cast<double>(k + 1)) + odds;
  }
  return {low < 0 ? k1 : low, high < 0 ? n : high};
}

}  // namespace

Interval PercentileInterval(std::vector<double> values, double p, double confidence) {
  std::sort(values.begin(), values.end());
  return PercentileIntervalOfSorted(values, p, confidence);
}

namespace {
// The interval's order statistics (1-based ranks l and u); outside 1..n that side is open.
std::pair<int64_t, int64_t> IntervalRanks(int64_t n, double p, double confidence) {
  // l = the number of k with P(B <= k) <= tail, u = one past the first k with P(B <= k) >= 1 - tail.
  const auto [low, high] = BinomialTailRanks(n, p / 100, (1 - confidence) / 2);
  return {low, high + 1};
}
}  // namespace

Interval PercentileIntervalOfSorted(const std::vector<double>& sorted, double p, double confidence) {
  const double inf = std::numeric_limits<double>::infinity();
  const int64_t n = static_cast<int64_t>(sorted.size());
  if (n == 0 || !(p > 0 && p < 100)) return Interval{-inf, inf};
  const auto [l, u] = IntervalRanks(n, p, confidence);
  return Interval{l >= 1 ? sorted[static_cast<size_t>(l - 1)] : -inf,
                  u <= n ? sorted[static_cast<size_t>(u - 1)] : inf};
}

std::vector<size_t> PercentileIntervalIndices(size_t n, double p, double confidence) {
  std::vector<size_t> out;
  if (n == 0 || !(p > 0 && p < 100)) return out;
  const auto [l, u] = IntervalRanks(static_cast<int64_t>(n), p, confidence);
  for (const int64_t r : {l, u})
    if (r >= 1 && r <= static_cast<int64_t>(n)) out.push_back(static_cast<size_t>(r - 1));
  return out;
}

int64_t MinSampleToBoundPercentile(double p, double confidence) {
  if (!(p > 0 && p < 100)) return INT64_MAX;
  const double tail = (1 - confidence) / 2, q = std::max(p / 100, 1 - p / 100);
  // q^n <= tail for the rarer side; the epsilon keeps an exact bound exact.
  return std::max<int64_t>(1, static_cast<int64_t>(std::ceil(std::log(tail) / std::log(q) - 1e-9)));
}

}  // namespace goodput
