// Token sampling: greedy, temperature, top-k, top-p, with a per-request RNG.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "engine/request.h"
#include "engine/step.h"

namespace goodput::cpu {

// Picks a token from `logits` (modified in place). temperature 0 is greedy
// (the first maximum). Otherwise logits / temperature, then the top_k best
// (0: all), softmax, then the smallest set whose probability reaches top_p.
int32_t SampleToken(std::vector<float>& logits, const SamplingParams& p, std::mt19937_64& rng);

// `token`'s log-probability under `logits` (log-softmax, before any
// sampling transform) and the `top` most likely tokens with theirs (ties:
// the lower id first).
TokenLogprob LogprobOf(const std::vector<float>& logits, int32_t token, int top);

}  // namespace goodput::cpu
