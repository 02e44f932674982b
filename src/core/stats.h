// Percentiles and small summaries over samples.
#pragma once

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

namespace goodput {

// The p-th percentile (p in [0, 100]) of `values` by linear interpolation
// between closest ranks: sort ascending, take the rank r = p/100 * (n - 1)
// (0-based) and interpolate between values[floor(r)] and values[ceil(r)].
// This is NumPy's default ("linear", Hyndman & Fan type 7), the method most
// serving benchmarks print, so our figures compare directly with theirs.
// Returns nullopt for an empty sample. `values` is taken by value and sorted.
std::optional<double> Percentile(std::vector<double> values, double p);

// Same for several percentiles at once (one sort). Empty sample -> all nullopt.
std::vector<std::optional<double>> Percentiles(std::vector<double> values,
                                               const std::vector<double>& ps);

// Same for a non-empty sample already sorted ascending (no copy, no sort).
// It reads only the two indices PercentileIndices names, so a sample ordered
// at those indices alone (SelectRanks) gives the same value.
double PercentileOfSorted(const std::vector<double>& sorted, double p);

// The indices of a sorted sample of `n` (> 0) that the p-th percentile
// interpolates between (equal when it falls on one).
std::pair<size_t, size_t> PercentileIndices(size_t n, double p);

// Rearranges `values` so that each index in `ranks` (each < values.size())
// holds what a full sort would put there: one std::nth_element per rank, each
// within the span its neighbours leave, O(n log k) for k ranks where a sort
// is O(n log n) (a simulated point's inter-token latencies run to millions).
void SelectRanks(std::vector<double>& values, std::vector<size_t> ranks);

// Arithmetic mean; nullopt for an empty sample.
std::optional<double> Mean(const std::vector<double>& values);

// The standard normal quantile: x with P(Z <= x) = p, for p in (0, 1).
double NormalQuantile(double p);

// Median of `values` (Percentile 50).
std::optional<double> Median(std::vector<double> values);

// A confidence interval (of a proportion, or of a percentile's value).
struct Interval {
  double lower = 0;
  double upper = 1;
};

// The Wilson score interval for `successes` out of `trials` at two-sided
// `confidence` (0.95: 2.5% on each side). Chosen over the normal
// approximation because it stays inside [0, 1] and keeps its coverage near 0
// and 1 — where SLO attainment lives — and over Clopper-Pearson because it is
// closed-form and less conservative. No trials: [0, 1].
Interval WilsonInterval(int64_t successes, int64_t trials, double confidence = 0.95);

// A distribution-free interval for the p-th percentile (p in (0, 100)) of
// the population `values` were drawn from, at two-sided `confidence`: the
// order statistics X(l) and X(u) with l the largest rank such that
// P(B < l) <= (1 - confidence) / 2 and u the smallest such that
// P(B < u) >= 1 - (1 - confidence) / 2, B ~ Binomial(n, p / 100) (exact, as
// in Conover's tables: n = 100, median -> ranks 40 and 61). A rank outside the
// sample leaves that side unbounded (-inf / +inf): 128 requests cannot bound
// a p99 from above. Empty sample, or p outside (0, 100): (-inf, +inf).
Interval PercentileInterval(std::vector<double> values, double p, double confidence = 0.95);
// Same for a sample already sorted ascending (no copy); it reads only the
// indices PercentileIntervalIndices names.
Interval PercentileIntervalOfSorted(const std::vector<double>& sorted, double p, double confidence = 0.95);
// The indices of a sorted sample of `n` that bound that interval (none for an open side).
std::vector<size_t> PercentileIntervalIndices(size_t n, double p, double confidence = 0.95);

// The smallest sample whose PercentileInterval of the p-th percentile is
// bounded on both sides: (p/100)^n and (1 - p/100)^n both at most
// (1 - confidence) / 2 (a p99 at 95% needs 368, a median 6). Below it the
// sample cannot tell a figure above (or below) its own from it. p outside
// (0, 100): INT64_MAX.
int64_t MinSampleToBoundPercentile(double p, double confidence = 0.95);

// The fewest trials for which even an all-success sample puts the Wilson
// lower bound at or above `required`: n >= z^2 p / (1 - p) (a p99 needs 381
// at 95%). Infinite (INT64_MAX) for required >= 1.
int64_t MinTrialsToShow(double required, double confidence = 0.95);

}  // namespace goodput
