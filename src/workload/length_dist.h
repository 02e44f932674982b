// A distribution of token lengths: request lengths for the planner, prompt and
// output lengths for workloads. Every form is held as a mixture of uniform
// integer segments [lo, hi] with weights, so the same code samples it, takes
// expectations and quantiles.
#pragma once

#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "core/status.h"

namespace goodput {

// The longest length a distribution (and so a workload's prompt, answer or
// trace row) may hold: 16,777,216 tokens, beyond every published context
// window (10M), so a larger figure is a typo. A run spends memory in
// proportion to a prompt's length (its token ids), so without a bound a typo
// ends the process instead of naming the line.
constexpr int64_t kMaxTokenLength = int64_t{1} << 24;

class LengthDistribution {
 public:
  // One length per line; blank lines and '#' comments are skipped. A line that
  // is not a positive whole number of at most kMaxTokenLength fails with its
  // line number.
  static Result<LengthDistribution> FromFile(const std::string& path);

  // A short spec (token counts follow ParseTokenCount: k = 1000, K = 1024):
  //   "fixed:8k"                        every length is 8,000
  //   "uniform:1k-4k"                   uniform on [1000, 4000]
  //   "normal:1k,200"                   mean 1000, standard deviation 200 (clamped to >= 1)
  //   "lognormal:1k,0.8"                mean 1000, log-space sigma 0.8
  //   "0-200k:0.7,200k-500k:0.3"        histogram; uniform within each bin, weights normalised
  //   "p50=2k,p90=8k,p99=32k,p100=64k"  quantiles; linear between points, from 1 at p0 unless given
  // A spec whose lengths reach beyond kMaxTokenLength is an error.
  static Result<LengthDistribution> FromSpec(const std::string& spec);

  // From observed lengths (the "empirical" form), each at most kMaxTokenLength.
  static Result<LengthDistribution> FromSamples(const std::vector<int64_t>& lengths, std::string description);

  // Draws one length (>= 1).
  int64_t Sample(std::mt19937_64& rng) const;

  // E[f(L)] over the distribution (segments wider than 64 tokens are
  // evaluated at 64 evenly spaced points).
  double Expect(const std::function<double(int64_t)>& f) const;
  double Mean() const;
  // The q-quantile, q in [0, 1].
  int64_t Quantile(double q) const;
  int64_t Max() const;
  size_t samples() const { return n_samples_; }
  const std::string& description() const { return description_; }

  // A copy with every length capped at `max_len`.
  LengthDistribution CappedAt(int64_t max_len) const;

 private:
  struct Segment {
    int64_t lo, hi;
    double weight;
  };
  static LengthDistribution FromSegments(std::vector<Segment> segments, std::string description, size_t samples);

  std::vector<Segment> segments_;  // sorted by lo; weights sum to 1
  std::vector<double> cumulative_; // cumulative weights, for sampling and quantiles
  std::string description_;
  size_t n_samples_ = 0;
};

}  // namespace goodput
