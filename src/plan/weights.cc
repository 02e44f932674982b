#include "plan/weights.h"

#include <cmath>

#include <fmt/format.h>

namespace goodput {

Result<WeightPrecision> ResolveWeightPrecision(const std::string& name, const ModelSpec& model) {
  WeightPrecision w;
  w.name = name;
  if (name == "auto") {
    if (model.quant.method == "fp8") return ResolveWeightPrecision(model.quant.block > 0 ? "fp8-block" : "fp8", model);
    if (model.quant.method == "mxfp4") {
      GOODPUT_ASSIGN_OR_RETURN(w, ResolveWeightPrecision("mxfp4", model));
      w.experts_only = model.quant.attention_excluded;
      if (w.experts_only) w.description += "; attention and router stay in the model dtype (checkpoint config)";
      return w;
    }
    if (!model.quant.method.empty()) {
      return Status::InvalidArgument(fmt::format(
          "the checkpoint's quantization '{}' is not known; pass --weights explicitly", model.quant.method));
    }
    return ResolveWeightPrecision(DTypeName(model.dtype), model);
  }
  if (name == "bf16" || name == "fp16") {
    w.linear_bytes = 2;
    w.description = "2 bytes per parameter";
  } else if (name == "fp32") {
    w.linear_bytes = 4;
    w.description = "4 bytes per parameter";
  } else if (name == "fp8" || name == "int8") {
    w.linear_bytes = 1;
    w.description = "1 byte per parameter; per-tensor or per-channel scales are negligible";
  } else if (name == "fp8-block") {
    w.linear_bytes = 1 + 4.0 / (128 * 128);
    w.description = "1 byte per parameter + one fp32 scale per 128x128 block";
  } else if (name == "int4") {
    w.linear_bytes = 0.5 + (2 + 0.5) / 128;
    w.description = "4 bits per parameter + fp16 scale and 4-bit zero per group of 128 (GPTQ/AWQ)";
  } else if (name == "mxfp4") {
    w.linear_bytes = 0.5 + 1.0 / 32;
    w.description = "4 bits per parameter + one 8-bit scale per 32";
  } else if (name == "nvfp4") {
    w.linear_bytes = 0.5 + 1.0 / 16;
    w.description = "4 bits per parameter + one fp8 scale per 16";
  } else {
    return Status::InvalidArgument(fmt::format(
        "unknown weight precision '{}' (use auto, bf16, fp16, fp32, fp8, fp8-block, int8, int4, mxfp4, nvfp4)", name));
  }
  return w;
}

int64_t WeightBytes(const ParamCounts& p, const WeightPrecision& w, const ModelSpec& model, int tensor_parallel) {
  const double dense = DTypeBytes(model.dtype);
  const double mixer = w.experts_only ? dense : w.linear_bytes;
  const double mlp = w.experts_only ? dense : w.linear_bytes;
  const double bytes = static_cast<double>(p.mixer_linear) * mixer + static_cast<double>(p.dense_mlp) * mlp +
                       static_cast<double>(p.routed_experts + p.shared_experts) * w.linear_bytes +
                       static_cast<double>(p.embedding + p.lm_head + p.router + p.small + p.vision) * dense;
  return static_cast<int64_t>(std::llround(bytes / tensor_parallel));
}

}  // namespace goodput
