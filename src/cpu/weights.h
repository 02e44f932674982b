// Weights of a Llama-family model for the CPU runner, in float32 and
// PyTorch's [out, in] layout: deterministic dummy weights (as vLLM's
// --load-format dummy) or a Hugging Face safetensors checkpoint.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"
#include "model/model_spec.h"

namespace goodput::cpu {

struct LayerWeights {
  std::vector<float> attn_norm;  // [H]
  std::vector<float> wqkv;       // [(heads + 2 kv_heads) * head_dim, H]: q, k, v stacked
  std::vector<float> wo;         // [H, heads * head_dim]
  std::vector<float> mlp_norm;   // [H]
  std::vector<float> w_gate_up;  // [2 I, H]: gate then up
  std::vector<float> w_down;     // [H, I]
};

struct ModelWeights {
  std::vector<float> embed;       // [V, H]
  std::vector<float> final_norm;  // [H]
  std::vector<float> lm_head;     // [V, H]; empty when tied to embed
  std::vector<LayerWeights> layers;

  const float* LmHead() const { return lm_head.empty() ? embed.data() : lm_head.data(); }
  int64_t Bytes() const;
};

// The CPU runner runs Llama-family models: full or sliding-window attention
// (GQA), RMSNorm, RoPE, SwiGLU MLP, no biases, no experts. Says why not.
Status CheckCpuSupported(const ModelSpec& m);

// Normal(0, initializer_range) for projections and embeddings, ones for
// norms; each tensor seeded from `seed` and its name, so any subset of the
// model comes out the same.
ModelWeights DummyWeights(const ModelSpec& m, uint64_t seed);

// Reads model.safetensors (or shards) from `dir` with Hugging Face Llama
// tensor names; errors name a missing tensor or a wrong shape.
Result<ModelWeights> LoadSafetensorsWeights(const ModelSpec& m, const std::string& dir);

}  // namespace goodput::cpu
