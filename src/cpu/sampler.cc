#include "cpu/sampler.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace goodput::cpu {

int32_t SampleToken(std::vector<float>& logits, const SamplingParams& p, std::mt19937_64& rng) {
  const auto n = static_cast<int32_t>(logits.size());
  if (p.temperature <= 0) return static_cast<int32_t>(std::max_element(logits.begin(), logits.end()) - logits.begin());
  std::vector<int32_t> idx(static_cast<size_t>(n));
  std::iota(idx.begin(), idx.end(), 0);
  const int32_t k = p.top_k > 0 ? std::min<int32_t>(p.top_k, n) : n;
  std::partial_sort(idx.begin(), idx.begin() + k, idx.end(),
                    [&](int32_t a, int32_t b) { return logits[a] > logits[b]; });
  idx.resize(static_cast<size_t>(k));
  std::vector<double> probs(idx.size());
  const double mx = logits[idx[0]];
  double sum = 0;
  for (size_t i = 0; i < idx.size(); ++i) {
    probs[i] = std::exp((logits[idx[i]] - mx) / p.temperature);
    sum += probs[i];
  }
  double cum = 0;
  size_t keep = idx.size();
  for (size_t i = 0; i < idx.size(); ++i) {
    probs[i] /= sum;
    cum += probs[i];
    if (cum >= p.top_p && keep == idx.size()) keep = i + 1;
  }
  std::discrete_distribution<size_t> pick(probs.begin(), probs.begin() + static_cast<std::ptrdiff_t>(keep));
  return idx[pick(rng)];
}

TokenLogprob LogprobOf(const std::vector<float>& logits, int32_t token, int top) {
  const float mx = *std::max_element(logits.begin(), logits.end());
  double sum = 0;
  for (float l : logits) sum += std::exp(static_cast<double>(l - mx));
  const double log_z = mx + std::log(sum);
  TokenLogprob out;
  out.logprob = static_cast<float>(logits[token] - log_z);
  const auto n = static_cast<int32_t>(logits.size());
  const int32_t k = std::clamp<int32_t>(top, 0, n);
  std::vector<int32_t> idx(static_cast<size_t>(n));
  std::iota(idx.begin(), idx.end(), 0);
  std::partial_sort(idx.begin(), idx.begin() + k, idx.end(), [&](int32_t a, int32_t b) {
    return logits[a] != logits[b] ? logits[a] > logits[b] : a < b;
  });
  for (int32_t i = 0; i < k; ++i) out.top.emplace_back(idx[i], static_cast<float>(logits[idx[i]] - log_z));
  return out;
}

}  // namespace goodput::cpu
