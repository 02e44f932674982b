// How many GPU kernels one forward pass launches, per GPU, counted from the
// model's layers the way vLLM's model files run them (CUDA graphs replay the
// same sequence every decode step). Each kernel costs a few microseconds
// beyond its work (the gap between kernels in a graph, ramp-up and tail), so a
// model of many small kernels (DeepSeek's 61 layers of MLA and routed experts
// at TP 8) spends most of a small-batch step there, while the roofline sees
// only bytes and FLOPs (docs/calibration.md, "Kernels").
#pragma once

#include <string>

#include "model/model_spec.h"

namespace goodput {

// Kernels in one layer: its norms, its token mixer (attention, MLA, DeltaNet,
// Mamba), its MLP (dense or routed experts with a shared expert), and one
// activation-quantization kernel before each projection that runs in an
// 8-bit or 4-bit activation format (`weight_precision` fp8, fp8-block, int8,
// nvfp4), but for the mixer's projections when the deployment leaves attention
// unquantized (`attention_unquantized`: its UnquantizedParts, which --weights
// auto fills from a config as gpt-oss's). Tensor-parallel all-reduces are not counted:
// the cost model times them from the link.
int KernelsInLayer(const ModelSpec& model, const LayerSpec& layer, const std::string& weight_precision,
                   bool attention_unquantized = false);

// Kernels in one forward pass: every layer's, plus the embedding lookup, the
// final norm, the LM head and sampling.
int KernelsPerForward(const ModelSpec& model, const std::string& weight_precision, bool attention_unquantized = false);

// Kernels in one drafter pass of `draft_layers` layers shaped as
// ModelSpec::DraftLayer says (DeepSeek's MTP layer, EAGLE's decoder layer),
// each with the input projection that joins the token's embedding to the
// hidden state (in the model dtype: no quantization kernel), then the shared
// LM head and sampling. 0 when draft_layers is 0.
int KernelsPerDraftPass(const ModelSpec& model, int draft_layers, const std::string& weight_precision,
                        bool attention_unquantized = false);

}  // namespace goodput
