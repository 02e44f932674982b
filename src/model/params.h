// Parameter counts computed from a ModelSpec, split the way weight memory is
// counted: which parts a weight-quantization scheme compresses (the linear
// projections inside decoder layers) and which stay in the model dtype.
#pragma once

#include <cstdint>

#include "model/model_spec.h"

namespace goodput {

struct ParamCounts {
  int64_t embedding = 0;        // input token embedding
  int64_t lm_head = 0;          // output projection (0 when tied)
  int64_t mixer_linear = 0;     // attention / MLA / DeltaNet / Mamba projections
  int64_t dense_mlp = 0;        // dense feed-forward projections
  int64_t routed_experts = 0;   // all routed experts' projections
  int64_t shared_experts = 0;   // shared experts' projections
  int64_t router = 0;           // expert routers (kept in model dtype)
  int64_t small = 0;            // norms, biases, convolution taps, per-head vectors
  int64_t vision = 0;           // vision encoder and projector (estimated layout)
  int64_t active = 0;           // used per token: all but the embedding table and unrouted experts

  int64_t total() const {
    return embedding + lm_head + mixer_linear + dense_mlp + routed_experts + shared_experts + router + small + vision;
  }
  int64_t language_model() const { return total() - vision; }
};

// Counts parameters from the config alone (no checkpoint). Multi-token-
// prediction layers are left out: vLLM loads them only with speculative
// decoding.
ParamCounts CountParams(const ModelSpec& m);

}  // namespace goodput
