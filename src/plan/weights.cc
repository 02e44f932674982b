#include "plan/weights.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "hw/hardware.h"

namespace goodput {

namespace {

int64_t RoundUp(int64_t n, int64_t alignment) { return (n + alignment - 1) / alignment * alignment; }

}  // namespace

Result<ExpertPadding> ResolveMxfp4MoeBackend(const std::string& name, const std::string& gpu_arch) {
  if (name == "auto") {
    if (!gpu_arch.empty() && !IsGpuArch(gpu_arch)) {
      return Status::InvalidArgument(fmt::format("GPU architecture '{}' is not sm<N> or gfx<N>", gpu_arch));
    }
    const int sm = SmVersion(gpu_arch);
    if (gpu_arch.starts_with("gfx")) return ResolveMxfp4MoeBackend("rocm", gpu_arch);
    if (sm == 100) return ResolveMxfp4MoeBackend("flashinfer-sm100", gpu_arch);  // exactly 10.0, as vLLM checks
    if (sm > 0 && sm < 90) return ResolveMxfp4MoeBackend("marlin", gpu_arch);
    return ResolveMxfp4MoeBackend("triton", gpu_arch);
  }
  if (name == "marlin") return ExpertPadding{name, 256, 128};  // n % 256 and k % 128 of both matmuls
  if (name == "triton") return ExpertPadding{name, 1, 64};
  if (name == "flashinfer-sm90") return ExpertPadding{name, 128, 128};
  if (name == "flashinfer-sm100") return ExpertPadding{name, 256, 256};
  if (name == "rocm") {
    const int64_t a = gpu_arch == "gfx950" ? 256 : 128;
    return ExpertPadding{name, a, a};
  }
  return Status::InvalidArgument(fmt::format(
      "unknown MXFP4 MoE backend '{}' (use auto, marlin, triton, flashinfer-sm90, flashinfer-sm100, rocm)", name));
}

double ExpertPaddingFactor(const WeightPrecision& w, const ModelSpec& model, int moe_group, bool expert_parallel) {
  const ExpertPadding& p = w.expert_padding;
  const int64_t h = model.hidden_size;
  const int64_t i = model.moe.expert_intermediate / (expert_parallel ? 1 : std::max(1, moe_group));
  if (p.backend.empty() || h <= 0 || i <= 0) return 1.0;
  return static_cast<double>(RoundUp(h, p.hidden_alignment)) *
         static_cast<double>(RoundUp(i, p.intermediate_alignment)) / (static_cast<double>(h) * static_cast<double>(i));
}

Result<WeightPrecision> ResolveWeightPrecision(const std::string& name, const ModelSpec& model,
                                               const ExpertPadding& mxfp4_backend) {
  WeightPrecision w;
  w.name = name;
  if (name == "auto") {
    if (model.quant.method == "fp8") return ResolveWeightPrecision(model.quant.block > 0 ? "fp8-block" : "fp8", model);
    if (model.quant.method == "mxfp4") {
      GOODPUT_ASSIGN_OR_RETURN(w, ResolveWeightPrecision("mxfp4", model, mxfp4_backend));
      w.unquantized.attention = model.quant.attention_excluded;
      if (w.unquantized.attention)
        w.description += "; attention and router stay in the model dtype (checkpoint config)";
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
    if (model.IsMoe() && !mxfp4_backend.backend.empty()) {
      w.expert_padding = mxfp4_backend;
      w.description += fmt::format(
          "; experts padded as vLLM's {} MoE kernel pads them (hidden size to a multiple of {}, "
          "each GPU's intermediate size to a multiple of {})",
          mxfp4_backend.backend, mxfp4_backend.hidden_alignment, mxfp4_backend.intermediate_alignment);
    }
  } else if (name == "nvfp4") {
    w.linear_bytes = 0.5 + 1.0 / 16;
    w.description = "4 bits per parameter + one fp8 scale per 16";
  } else {
    return Status::InvalidArgument(fmt::format(
        "unknown weight precision '{}' (use auto, bf16, fp16, fp32, fp8, fp8-block, int8, int4, mxfp4, nvfp4)", name));
  }
  return w;
}

std::string WeightPrecisionLabel(const WeightPrecision& w, const ModelSpec& model) {
  if (!w.unquantized.any()) return w.name;
  return fmt::format("{} ({} in {})", w.name, UnquantizedPartsName(w.unquantized), DTypeName(model.dtype));
}

Status LeaveUnquantized(const std::string& list, const ModelSpec& model, WeightPrecision& w) {
  if (list.empty()) return Status::Ok();
  auto parts = ParseUnquantizedParts(list);
  if (!parts.ok()) return parts.status().WithContext("--unquantized");
  if (w.linear_bytes >= DTypeBytes(model.dtype)) {
    return Status::InvalidArgument(fmt::format(
        "--unquantized: weights '{}' are not quantized, so no part is left out (give --weights too)", w.name));
  }
  w.unquantized.Merge(*parts);
  w.description += fmt::format("; {} in the model dtype (--unquantized)", UnquantizedPartsName(*parts));
  return Status::Ok();
}

int64_t WeightBytes(const ParamCounts& p, const WeightPrecision& w, const ModelSpec& model, int tensor_parallel,
                    bool expert_parallel, int moe_group) {
  if (moe_group <= 0) moe_group = tensor_parallel;
  const double dense = DTypeBytes(model.dtype);
  const double padding = ExpertPaddingFactor(w, model, moe_group, expert_parallel);
  // The dense linear layers as each GPU holds them (MLA's down-projections
  // whole), at the format's bytes but for what the checkpoint leaves out; the
  // routers whole on every GPU; the rest split; the routed experts over the MoE group.
  const double kept = UnquantizedParamsPerGpu(p, w.unquantized, tensor_parallel);
  const double linear = (DenseLinearParamsPerGpu(p, tensor_parallel) - kept) * w.linear_bytes + kept * dense;
  const double other = static_cast<double>(p.router) * dense +
                       static_cast<double>(p.embedding + p.lm_head + p.small + p.vision) * dense / tensor_parallel;
  const double experts = static_cast<double>(p.routed_experts) * padding * w.linear_bytes;
  return static_cast<int64_t>(std::llround(linear + other + experts / moe_group));
}

int64_t MlaDecodeCopyBytes(const ModelSpec& model, const WeightPrecision& precision, int tensor_parallel) {
  const int64_t dense = DTypeBytes(model.dtype);
  if (precision.unquantized.attention || precision.linear_bytes >= dense) return 0;
  const MlaDims& d = model.mla;
  const int64_t per_layer = d.kv_lora_rank * model.attn.num_heads * (d.qk_nope_head_dim + d.v_head_dim);
  return model.CountLayers(LayerKind::kMla) * per_layer / tensor_parallel * dense;
}

int64_t UnreadWeightBytes(const ParamCounts& p, const ModelSpec& model, int tensor_parallel) {
  const int64_t input_table = p.lm_head > 0 ? p.embedding : 0;
  const double bytes = static_cast<double>(input_table + p.vision) * DTypeBytes(model.dtype);
  return static_cast<int64_t>(std::llround(bytes / tensor_parallel));
}

}  // namespace goodput
