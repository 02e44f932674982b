// A distribution of request lengths (prompt + output tokens: what a request
// holds in KV at its peak), from a file of observed lengths or a short spec.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/status.h"

namespace goodput {

class LengthDistribution {
 public:
  // One length per line; blank lines and '#' comments are skipped. A line that
  // is not a positive whole number fails with its line number.
  static Result<LengthDistribution> FromFile(const std::string& path);

  // A short spec:
  //   "fixed:8k"                          every request is 8,000 tokens
  //   "0-200k:0.7,200k-500k:0.3"          histogram; uniform within each bin,
  //                                       weights normalised to sum to 1
  //   "p50=2k,p90=8k,p99=32k,p100=64k"    quantiles; linear between points,
  //                                       starting from 1 token at p0 unless given
  // Token counts follow ParseTokenCount (k = 1000, K = 1024).
  static Result<LengthDistribution> FromSpec(const std::string& spec);

  // E[f(L)] over the distribution.
  double Expect(const std::function<double(int64_t)>& f) const;
  double Mean() const;
  // The q-quantile (q in [0, 1]) by the weighted points' cumulative weight.
  int64_t Quantile(double q) const;
  int64_t Max() const;
  size_t samples() const { return n_samples_; }
  const std::string& description() const { return description_; }

  // A copy with every length capped at `max_len` (vLLM rejects longer ones).
  LengthDistribution CappedAt(int64_t max_len) const;

 private:
  struct Point {
    int64_t length;
    double weight;
  };
  static LengthDistribution FromPoints(std::vector<Point> points, std::string description, size_t samples);

  std::vector<Point> points_;  // sorted by length, weights sum to 1
  std::string description_;
  size_t n_samples_ = 0;       // observed samples (files), 0 for specs
};

}  // namespace goodput
