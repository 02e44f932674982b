#include "hw/cost_model.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace goodput {

Result<CostFactors> FactorsFor(const HardwareSpec& hw, const std::string& precision) {
  CostFactors f;
  f.bandwidth = hw.memory_bandwidth;
  f.compute_efficiency = hw.compute_efficiency;
  f.bandwidth_efficiency = hw.bandwidth_efficiency;
  f.step_overhead_s = hw.step_overhead_s;
  std::optional<double> peak = hw.bf16_flops;
  if (precision == "fp8" || precision == "fp8-block" || precision == "int8") {
    peak = hw.fp8_flops ? hw.fp8_flops : hw.bf16_flops;
  } else if (precision == "mxfp4" || precision == "nvfp4") {
    peak = hw.fp4_flops ? hw.fp4_flops : hw.bf16_flops;
  }
  if (!peak || *peak <= 0) return Status::InvalidArgument(fmt::format("{} has no FLOP/s figure for {}", hw.name, precision));
  f.peak_flops = *peak;
  return f;
}

CostModel::CostModel(DeployedModel model, CostFactors factors) : m_(std::move(model)), f_(factors) {
  const ModelSpec& s = m_.model;
  const double tp = m_.tensor_parallel;
  const ParamCounts& p = m_.params;
  const int64_t head = s.tie_word_embeddings ? p.embedding : p.lm_head;
  double per_token = 2.0 * static_cast<double>(p.active - head);
  // A DeltaNet layer also updates its (heads x dk x dv) state for every token.
  const double delta = 4.0 * s.linear.num_value_heads * s.linear.key_head_dim * s.linear.value_head_dim;
  per_token += delta * static_cast<double>(s.CountLayers(LayerKind::kLinearAttention));
  linear_flops_per_token_ = per_token / tp;
  lm_head_flops_ = 2.0 * static_cast<double>(s.vocab_size * s.hidden_size) / tp;
  const double heads = static_cast<double>(s.attn.num_heads) / tp;
  const double per_layer_standard = 4.0 * heads * static_cast<double>(s.attn.head_dim);
  const double per_layer_mla =
      2.0 * heads * static_cast<double>(s.mla.qk_nope_head_dim + s.mla.qk_rope_head_dim + s.mla.v_head_dim);
  attn_flops_per_pair_full_ = per_layer_standard * static_cast<double>(s.CountLayers(LayerKind::kFullAttention)) +
                              per_layer_mla * static_cast<double>(s.CountLayers(LayerKind::kMla));
  attn_flops_per_pair_sliding_ = per_layer_standard * static_cast<double>(s.CountLayers(LayerKind::kSlidingAttention));
  moe_touch_ = s.IsMoe() ? static_cast<double>(s.moe.experts_per_token) / static_cast<double>(s.moe.num_experts) : 0;
}

void CostModel::Add(Step& step, int64_t c, int64_t n, bool samples) const {
  const double cd = static_cast<double>(c), nd = static_cast<double>(n);
  step.tokens += nd;
  step.samples += samples ? 1 : 0;
  // Token at position c + i attends to c + i + 1 keys (causal within the chunk).
  step.attn_pairs_full += nd * cd + nd * (nd + 1) / 2;
  if (m_.sliding_window > 0) {
    const double w = static_cast<double>(m_.sliding_window);
    const double last = cd + nd;  // keys of the last token
    const double ramp_end = std::min(last, w);
    const double ramp = ramp_end > cd ? (ramp_end * (ramp_end + 1) - cd * (cd + 1)) / 2 : 0;
    step.attn_pairs_sliding += ramp + std::max(0.0, last - std::max(cd, w)) * w;
  }
  step.kv_bytes += static_cast<double>(m_.full_bytes_per_token) * (cd + nd) +
                   static_cast<double>(m_.sliding_bytes_per_token) *
                       std::min(cd + nd, static_cast<double>(m_.sliding_window) + nd) +
                   2.0 * static_cast<double>(m_.state_bytes);
}

double CostModel::ComputeSeconds(const Step& s) const {
  const double flops = linear_flops_per_token_ * s.tokens + lm_head_flops_ * s.samples +
                       attn_flops_per_pair_full_ * s.attn_pairs_full +
                       attn_flops_per_pair_sliding_ * s.attn_pairs_sliding;
  return flops / (f_.peak_flops * f_.compute_efficiency);
}

double CostModel::MemorySeconds(const Step& s) const {
  double weights = static_cast<double>(m_.weight_bytes);
  if (moe_touch_ > 0 && s.tokens > 0) {
    // Each token picks k of E experts per layer: the share of experts the
    // step reads is 1 - (1 - k/E)^tokens (routing taken as uniform).
    const double touched = 1.0 - std::pow(1.0 - moe_touch_, s.tokens);
    weights -= static_cast<double>(m_.expert_weight_bytes) * (1.0 - touched);
  }
  return (weights + s.kv_bytes) / (f_.bandwidth * f_.bandwidth_efficiency);
}

double CostModel::Seconds(const Step& s) const {
  if (s.tokens <= 0) return 0;
  return f_.step_overhead_s + std::max(ComputeSeconds(s), MemorySeconds(s));
}

}  // namespace goodput
