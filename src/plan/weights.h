// Weight precision families and the bytes they take, scale overhead included.
#pragma once

#include <cstdint>
#include <string>

#include "core/status.h"
#include "model/model_spec.h"
#include "model/params.h"

namespace goodput {

struct WeightPrecision {
  std::string name;              // "bf16", "fp8-block", "int4", "mxfp4", ...
  double linear_bytes = 2;       // bytes per quantized linear-layer parameter, scales included
  bool experts_only = false;     // only expert projections are quantized (gpt-oss's mxfp4)
  std::string description;       // how the bytes were counted
};

// Names accepted by --weights: auto (the checkpoint's own: its
// quantization_config, else its dtype), bf16, fp16, fp32, fp8 (per-tensor or
// per-channel scales), fp8-block (128x128 blocks, one fp32 scale each), int8,
// int4 (GPTQ/AWQ, group 128: fp16 scale + 4-bit zero per group), mxfp4 (one
// e8m0 scale per 32), nvfp4 (one fp8 scale per 16).
Result<WeightPrecision> ResolveWeightPrecision(const std::string& name, const ModelSpec& model);

// Bytes of all weights on one GPU: quantized linear layers at the precision,
// everything else (embeddings, LM head, norms, routers, vision tower) in the
// model dtype, divided across `tensor_parallel` GPUs.
int64_t WeightBytes(const ParamCounts& params, const WeightPrecision& precision, const ModelSpec& model,
                    int tensor_parallel);

}  // namespace goodput
