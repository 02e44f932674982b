// Percentiles and small summaries over samples.
#pragma once

#include <optional>
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

// Arithmetic mean; nullopt for an empty sample.
std::optional<double> Mean(const std::vector<double>& values);

// The standard normal quantile: x with P(Z <= x) = p, for p in (0, 1).
double NormalQuantile(double p);

// Median of `values` (Percentile 50).
std::optional<double> Median(std::vector<double> values);

}  // namespace goodput
