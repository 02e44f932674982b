// Weight precision families and the bytes they take, scale overhead included.
#pragma once

#include <cstdint>
#include <string>

#include "core/status.h"
#include "model/model_spec.h"
#include "model/params.h"

namespace goodput {

// How an MoE kernel lays out the routed experts' matrices: vLLM's MXFP4 MoE
// kernels round the hidden size, and each GPU's share of the expert
// intermediate size, up to their tile before allocating the weights.
struct ExpertPadding {
  std::string backend;              // "marlin", "triton", ...; empty: the checkpoint's shapes
  int64_t hidden_alignment = 1;
  int64_t intermediate_alignment = 1;
};

struct WeightPrecision {
  std::string name;              // "bf16", "fp8-block", "int4", "mxfp4", ...
  double linear_bytes = 2;       // bytes per quantized linear-layer parameter, scales included
  UnquantizedParts unquantized;  // parts left in the model dtype (gpt-oss's mxfp4 attention)
  ExpertPadding expert_padding;  // mxfp4 on an MoE model: the kernel's padding
  std::string description;       // how the bytes were counted
};

// Names accepted by --mxfp4-moe-backend, vLLM's MXFP4 MoE kernels as
// vllm/model_executor/layers/quantization/mxfp4.py (0.10.2-0.11) pads them:
// marlin (intermediate to 128, hidden to 256), triton (intermediate to 64),
// flashinfer-sm90 (both to 128), flashinfer-sm100 (both to 256), rocm (both
// to 128; 256 on gfx950). auto picks what vLLM picks on `gpu_arch` ("sm80",
// "sm90", "gfx942", ...): Marlin below sm90, FlashInfer on sm100, ROCm's on
// gfx, Triton elsewhere (sm90, where FlashInfer is opt-in, and sm120) and
// when the card is not known (empty).
Result<ExpertPadding> ResolveMxfp4MoeBackend(const std::string& name, const std::string& gpu_arch);

// Names accepted by --weights: auto (the checkpoint's own: its
// quantization_config, else its dtype), bf16, fp16, fp32, fp8 (per-tensor or
// per-channel scales), fp8-block (128x128 blocks, one fp32 scale each), int8,
// int4 (GPTQ/AWQ, group 128: fp16 scale + 4-bit zero per group), mxfp4 (one
// e8m0 scale per 32), nvfp4 (one fp8 scale per 16).
// `mxfp4_backend` (see ResolveMxfp4MoeBackend) pads an MoE model's mxfp4
// experts; other precisions ignore it.
Result<WeightPrecision> ResolveWeightPrecision(const std::string& name, const ModelSpec& model,
                                               const ExpertPadding& mxfp4_backend = {});

// Routed experts' bytes as allocated / as the checkpoint counts them: 1 without
// padding. Each GPU holds 1/`moe_group` of every expert's intermediate size
// (the MoE layer's GPUs: the tensor-parallel size, times the data-parallel
// size), or whole experts when `expert_parallel`.
double ExpertPaddingFactor(const WeightPrecision& precision, const ModelSpec& model, int moe_group,
                           bool expert_parallel);

// The precision's name, with the parts it leaves in the model dtype where it
// leaves any: "nvfp4", "nvfp4 (attention,draft in bf16)".
std::string WeightPrecisionLabel(const WeightPrecision& w, const ModelSpec& model);

// Adds the parts named in `list` (ParseUnquantizedParts) to those `w` leaves
// in the model dtype. Fails on an unknown part, or when `w` is the model
// dtype already (nothing is quantized to leave out).
Status LeaveUnquantized(const std::string& list, const ModelSpec& model, WeightPrecision& w);

// Bytes of all weights on one GPU: quantized linear layers at the precision
// (routed experts padded as the precision's kernel pads them), everything else
// (embeddings, LM head, norms, routers, vision tower) in the model dtype,
// divided across `tensor_parallel` GPUs but for the routers and MLA's
// down-projections, which each of them holds whole, the routed experts across
// `moe_group` GPUs (0: tensor_parallel; whole experts per GPU when
// `expert_parallel`).
int64_t WeightBytes(const ParamCounts& params, const WeightPrecision& precision, const ModelSpec& model,
                    int tensor_parallel, bool expert_parallel = false, int moe_group = 0);

// vLLM's MLA keeps a 16-bit copy of each layer's kv_b_proj for its decode
// bmm's (W_UK_T and W_UV; MLACommonImpl.process_weights_after_loading: "we
// currently do not have quantized bmm's ... we just store fp16/bf16 copies")
// beside the quantized kv_b_proj its prefill runs: its heads' share on one of
// `tensor_parallel` GPUs in the model dtype; 0 when the model has no MLA or
// its attention is not quantized (counted as the bmm's reading kv_b_proj's
// own 16-bit weights).
int64_t MlaDecodeCopyBytes(const ModelSpec& model, const WeightPrecision& precision, int tensor_parallel);

// Bytes of those weights on one GPU that an engine step over text does not
// stream: the vision tower, and an untied input embedding table, of which a
// step gathers only its tokens' rows (a few KB; a tied table is the LM head,
// read whole wherever a token is sampled). Both are in the model dtype.
int64_t UnreadWeightBytes(const ParamCounts& params, const ModelSpec& model, int tensor_parallel);

}  // namespace goodput
