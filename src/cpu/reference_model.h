// A plain reference forward pass for tests: one request, contiguous fp32 KV,
// one token at a time, naive loops, rotate-half RoPE with the default
// frequencies. Shares no numeric code with the runner.
#pragma once

#include <cstdint>
#include <vector>

#include "cpu/weights.h"
#include "model/model_spec.h"

namespace goodput::cpu {

class ReferenceModel {
 public:
  ReferenceModel(const ModelSpec& m, const ModelWeights& w) : m_(m), w_(w), k_(m.num_layers), v_(m.num_layers) {}
  // Feeds the next token; returns the logits for the position after it.
  std::vector<float> Forward(int32_t token);

 private:
  const ModelSpec& m_;
  const ModelWeights& w_;
  std::vector<std::vector<float>> k_, v_;  // per layer: [position][kv_heads * head_dim]
  int64_t pos_ = 0;
};

}  // namespace goodput::cpu
