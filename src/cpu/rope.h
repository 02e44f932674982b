// Rotary position embeddings with the rope-scaling types of the catalog's
// configs (default, linear, llama3, yarn), following transformers'
// modeling_rope_utils. Rotation is rotate-half (pairs i and i + d/2), as in
// Llama.
#pragma once

#include <cstdint>
#include <vector>

#include "core/status.h"
#include "model/model_spec.h"

namespace goodput::cpu {

class Rope {
 public:
  static Result<Rope> Create(const RopeSpec& spec, int64_t head_dim, int64_t max_position_embeddings);

  int64_t rotary_dim() const { return rotary_dim_; }
  double attention_factor() const { return attention_factor_; }
  const std::vector<double>& inv_freq() const { return inv_freq_; }

  // cos and sin (already scaled by the attention factor) for `position`, each
  // rotary_dim / 2 long.
  void Angles(int64_t position, float* cos_out, float* sin_out) const;

  // Rotates every head of `x` (heads x head_dim, contiguous) in place.
  void Apply(float* x, int64_t heads, int64_t head_dim, const float* cos, const float* sin) const;

 private:
  int64_t rotary_dim_ = 0;
  std::vector<double> inv_freq_;
  double attention_factor_ = 1;
};

}  // namespace goodput::cpu
