// Parameter counts computed from a ModelSpec, split the way weight memory is
// counted: which parts a weight-quantization scheme compresses (the linear
// projections inside decoder layers) and which stay in the model dtype.
#pragma once

#include <cstdint>
#include <string>

#include "core/status.h"
#include "model/model_spec.h"

namespace goodput {

struct ParamCounts {
  int64_t embedding = 0;        // input token embedding
  int64_t lm_head = 0;          // output projection (0 when tied)
  int64_t mixer_linear = 0;     // attention / MLA / DeltaNet / Mamba projections
  int64_t mixer_replicated = 0;  // of mixer_linear: MLA's down-projections, whole on every tensor-parallel GPU
  int64_t dense_mlp = 0;        // dense feed-forward projections
  int64_t routed_experts = 0;   // all routed experts' projections
  int64_t shared_experts = 0;   // shared experts' projections
  int64_t router = 0;           // expert routers (kept in model dtype; whole on every tensor-parallel GPU)
  int64_t small = 0;            // norms, biases, convolution taps, per-head vectors
  int64_t vision = 0;           // vision encoder and projector (estimated layout)
  int64_t active = 0;           // used per token: all but the embedding table and unrouted experts

  int64_t total() const {
    return embedding + lm_head + mixer_linear + dense_mlp + routed_experts + shared_experts + router + small + vision;
  }
  int64_t language_model() const { return total() - vision; }
};

// The parts of the linear layers a quantized checkpoint leaves in the model
// dtype (its config's ignore / exclude_modules / modules_to_not_convert list):
// gpt-oss's attention; NVIDIA's NVFP4 DeepSeek-R1 keeps attention and its
// multi-token-prediction layer in bf16, Model Optimizer quantizing only its
// feed-forward layers.
struct UnquantizedParts {
  bool attention = false;       // the mixer's projections (attention, MLA, DeltaNet, Mamba)
  bool dense_mlp = false;       // dense feed-forward layers
  bool shared_experts = false;  // MoE shared experts
  bool draft = false;           // multi-token-prediction / draft layers, every part of them
  bool any() const { return attention || dense_mlp || shared_experts || draft; }
  void Merge(const UnquantizedParts& other);  // every part either leaves out
};

// Parses a comma-separated list of attention, dense-mlp, shared-experts and
// draft; an empty list is none.
Result<UnquantizedParts> ParseUnquantizedParts(const std::string& list);
// The list ParseUnquantizedParts reads back, e.g. "attention,draft".
std::string UnquantizedPartsName(const UnquantizedParts& parts);

// Of the target's dense linear parameters (all but the routed experts), those
// in the model dtype under `parts`: per GPU of `tensor_parallel`, which holds
// the replicated ones whole.
double UnquantizedParamsPerGpu(const ParamCounts& p, const UnquantizedParts& parts, int tensor_parallel);
// All of the target's dense linear parameters (the mixer's, dense MLPs' and
// shared experts') on one of `tensor_parallel` GPUs, the replicated ones whole.
double DenseLinearParamsPerGpu(const ParamCounts& p, int tensor_parallel);

// Counts parameters from the config alone (no checkpoint). Multi-token-
// prediction layers are left out: vLLM loads them only with speculative
// decoding.
ParamCounts CountParams(const ModelSpec& m);

}  // namespace goodput
