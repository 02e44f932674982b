#include "hw/kernel_count.h"

namespace goodput {

namespace {

// Weight formats whose GEMMs take quantized activations, so each projection
// is preceded by a quantization kernel (vLLM's scaled_fp8_quant,
// per_token_group_quant_fp8, scaled_fp4_quant). Weight-only formats (int4,
// mxfp4 as vLLM runs it on Hopper) dequantize inside the GEMM.
bool QuantizesActivations(const std::string& precision) {
  return precision == "fp8" || precision == "fp8-block" || precision == "int8" || precision == "nvfp4";
}

struct Kernels {
  int other = 0;        // norms, rotary, cache writes, attention, activations, routing
  int projections = 0;  // GEMMs in the weight format (each may need an activation-quant kernel)
};

// The token mixer as vLLM's model files run it in a decode step.
Kernels Mixer(const ModelSpec& m, LayerKind kind) {
  switch (kind) {
    case LayerKind::kFullAttention:
    case LayerKind::kSlidingAttention:
      // llama.py / qwen3.py: qkv_proj, rotary_emb, reshape_and_cache, attention,
      // o_proj; Qwen3's q_norm and k_norm; Qwen3-Next's sigmoid output gate.
      return {3 + (m.attn.qk_norm ? 2 : 0) + (m.attn.output_gate ? 1 : 0), 2};
    case LayerKind::kMla:
      // deepseek_v2.py with the MLA backend: fused_qkv_a_proj (q_a and kv_a;
      // q_proj and kv_a_proj when q is not low-rank), q_a and kv_a layernorms,
      // q_b_proj, rotary, concat_and_cache_mla, the W_UK and W_UV batched
      // matmuls of the absorbed decode, the attention kernel and its
      // split-KV combine, o_proj.
      return m.mla.q_lora_rank > 0 ? Kernels{8, 3} : Kernels{7, 3};
    case LayerKind::kLinearAttention:
      // qwen3_next.py: in_proj_qkvz and in_proj_ba, the causal conv1d, the
      // gated delta rule, the gated norm, out_proj.
      return {3, 3};
    case LayerKind::kMamba:
    case LayerKind::kMamba2:
      // mamba_mixer(2).py: in_proj, causal conv1d, selective scan, (gated
      // norm), out_proj.
      return {kind == LayerKind::kMamba2 ? 3 : 2, 2};
    case LayerKind::kMlpOnly: return {0, 0};
  }
  return {};
}

// The MLP: dense (gate_up_proj, SiluAndMul, down_proj) or vLLM's FusedMoE
// (router GEMM, top-k, moe_align_block_size, the two grouped expert GEMMs with
// the activation between, moe_sum) with its shared expert (a dense MLP and
// the add; Qwen's sigmoid gate on it).
Kernels Mlp(const ModelSpec& m, MlpKind kind) {
  switch (kind) {
    case MlpKind::kDense: return {1, 2};
    case MlpKind::kMoe: {
      Kernels k{5, 2};
      if (m.moe.shared_intermediate > 0) {
        k.other += 2 + (m.moe.shared_gate ? 1 : 0);
        k.projections += 2;
      }
      return k;
    }
    case MlpKind::kNone: return {0, 0};
  }
  return {};
}

}  // namespace

int KernelsInLayer(const ModelSpec& m, const LayerSpec& layer, const std::string& precision,
                   bool attention_unquantized) {
  const Kernels mixer = Mixer(m, layer.kind);
  const Kernels mlp = Mlp(m, layer.mlp);
  const bool quantized = QuantizesActivations(precision);
  // The deployment says what stays unquantized (UnquantizedParts: gpt-oss's config fills it under --weights auto).
  const int quantized_projections = quantized ? (attention_unquantized ? 0 : mixer.projections) + mlp.projections : 0;
  return static_cast<int>(m.norms_per_layer) + mixer.other + mixer.projections + mlp.other + mlp.projections +
         quantized_projections;
}

int KernelsPerForward(const ModelSpec& m, const std::string& precision, bool attention_unquantized) {
  int kernels = 0;
  for (const LayerSpec& layer : m.layers) kernels += KernelsInLayer(m, layer, precision, attention_unquantized);
  // Embedding lookup, final norm, LM head, and the sampler's two (logits
  // processing and the pick).
  return kernels + 5;
}

int KernelsPerDraftPass(const ModelSpec& m, int draft_layers, const std::string& precision,
                        bool attention_unquantized) {
  const std::optional<LayerSpec> layer = m.DraftLayer();
  if (draft_layers <= 0 || !layer) return 0;
  // DeepSeek's MTP layer (deepseek_mtp.py): enorm and hnorm, the eh_proj
  // joining them, then a decoder layer; EAGLE's fc plays eh_proj's part. The
  // join is a plain nn.Linear in the model dtype, so no activation quantization.
  const int join = 3;
  return draft_layers * (join + KernelsInLayer(m, *layer, precision, attention_unquantized)) + 4;
}

}  // namespace goodput
