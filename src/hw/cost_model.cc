#include "hw/cost_model.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "hw/kernel_count.h"

namespace goodput {

namespace {

// `curve` at `x`, interpolated in log(x), constant beyond its ends.
double Interpolate(const std::vector<std::pair<double, double>>& c, double x) {
  const double tokens = x;
  if (tokens <= c.front().first) return c.front().second;
  if (tokens >= c.back().first) return c.back().second;
  size_t i = 1;
  while (c[i].first < tokens) ++i;
  const double x0 = std::log(c[i - 1].first), x1 = std::log(c[i].first);
  const double w = (std::log(tokens) - x0) / (x1 - x0);
  return c[i - 1].second + w * (c[i].second - c[i - 1].second);
}

}  // namespace

double CostFactors::EfficiencyAt(double tokens) const {
  return efficiency_curve.empty() ? compute_efficiency : Interpolate(efficiency_curve, tokens);
}

double CostFactors::AttentionEfficiencyAt(double query_tokens) const {
  return attention_curve.empty() ? compute_efficiency : Interpolate(attention_curve, query_tokens);
}

double CostFactors::ExpertEfficiencyAt(double tokens) const {
  return expert_efficiency > 0 ? expert_efficiency : EfficiencyAt(tokens);
}

namespace {

bool IsFp8(const std::string& precision) { return precision == "fp8" || precision == "fp8-block"; }
bool IsFp4(const std::string& precision) { return precision == "mxfp4" || precision == "nvfp4"; }

Result<double> PeakFor(const HardwareSpec& hw, const std::string& precision) {
  std::optional<double> peak = hw.bf16_flops;
  if (IsFp8(precision) || precision == "int8") {
    peak = hw.fp8_flops ? hw.fp8_flops : hw.bf16_flops;
  } else if (IsFp4(precision)) {
    peak = hw.fp4_flops ? hw.fp4_flops : hw.bf16_flops;
  }
  if (!peak || *peak <= 0)
    return Status::InvalidArgument(fmt::format("{} has no FLOP/s figure for {}", hw.name, precision));
  return *peak;
}

// The FFN width a token's activation-and-multiply passes over in `layer`: a
// MoE layer's k routed experts' and its shared expert's; none without an MLP.
int64_t FfnWidth(const ModelSpec& s, const LayerSpec& layer) {
  switch (layer.mlp) {
    case MlpKind::kDense:
      return s.intermediate_size;
    case MlpKind::kMoe:
      return s.moe.experts_per_token * s.moe.expert_intermediate + s.moe.shared_intermediate;
    case MlpKind::kNone:
      return 0;
  }
  return 0;
}

// Bytes a token moves through the kernels between the matmuls, per GPU over
// every layer, with 16-bit activations: each of the layer's norms as a fused
// residual-add + RMSNorm pass, reading and writing the hidden state and the
// residual (vLLM's fused_add_rms_norm, in place: 8 x hidden), and the FFN's
// activation-and-multiply reading the gate and up halves and writing one
// (silu_and_mul: 6 x its width, a tensor-parallel GPU's share). Left out:
// RoPE and the FP8 input quantization, which engines fuse in varying degrees.
double ElementwiseBytesPerToken(const ModelSpec& s, int64_t tensor_parallel) {
  double bytes = 0;
  for (const LayerSpec& layer : s.layers) {
    bytes += 8.0 * static_cast<double>(s.norms_per_layer * s.hidden_size) +
             6.0 * static_cast<double>(FfnWidth(s, layer)) / static_cast<double>(tensor_parallel);
  }
  return bytes;
}

}  // namespace

std::optional<std::string> WeightOnlyWarning(const HardwareSpec& hw, const std::string& precision) {
  const bool fp8 = IsFp8(precision), fp4 = IsFp4(precision);
  if ((!fp8 || hw.fp8_flops) && (!fp4 || hw.fp4_flops)) return std::nullopt;
  const std::string display = hw.display.empty() ? hw.name : hw.display;
  return fmt::format(
      "warning: {} has no {} FLOP/s figure (no {} tensor cores, or none given): {} weights run "
      "weight-only, dequantized to 16-bit inside the kernels (as vLLM's Marlin kernels do), at its "
      "16-bit peak of {:.0f} TFLOP/s",
      display, fp8 ? "FP8" : "FP4", fp8 ? "FP8" : "FP4", precision, hw.bf16_flops.value_or(0) / 1e12);
}

Result<CostFactors> FactorsFor(const HardwareSpec& hw, const std::string& precision) {
  CostFactors f;
  f.bandwidth = hw.memory_bandwidth;
  f.compute_efficiency = hw.ComputeEfficiencyFor(precision);
  f.expert_efficiency = hw.ExpertEfficiencyFor(precision);
  f.bandwidth_efficiency = hw.bandwidth_efficiency;
  f.step_overhead_s = hw.step_overhead_s;
  f.link_bandwidth = hw.link_bandwidth;
  f.link_latency_s = hw.link_latency_s;
  f.kernel_latency_s = hw.kernel_latency_s;
  f.overlap = hw.overlap;
  GOODPUT_ASSIGN_OR_RETURN(const double peak, PeakFor(hw, precision));
  f.peak_flops = peak;
  const double attention = hw.AttentionEfficiencyFor(precision);
  if (hw.bf16_flops && *hw.bf16_flops > 0 && (f.compute_efficiency != attention || peak != *hw.bf16_flops)) {
    // Attention multiplies activations and KV, not weights: it runs in 16-bit
    // at the card's attention efficiency whatever the weights' format (as a
    // constant curve, relative to this format's peak).
    f.attention_curve = {{1.0, attention * *hw.bf16_flops / peak}};
  }
  if (hw.bf16_flops && *hw.bf16_flops > 0)
    f.head_rate = *hw.bf16_flops * hw.ComputeEfficiencyFor("bf16") / (peak * f.compute_efficiency);
  return f;
}

Result<CostFactors> FactorsForWeights(const CostFactors& fitted, const HardwareSpec& hw,
                                      const std::string& fitted_precision, const std::string& precision) {
  if (precision == fitted_precision) return fitted;
  GOODPUT_ASSIGN_OR_RETURN(const double from_peak, PeakFor(hw, fitted_precision));
  GOODPUT_ASSIGN_OR_RETURN(const double to_peak, PeakFor(hw, precision));
  const double peak_ratio = to_peak / from_peak;
  const double matmul_ratio = hw.ComputeEfficiencyFor(precision) / hw.ComputeEfficiencyFor(fitted_precision);
  const double attention_ratio = hw.AttentionEfficiencyFor(precision) / hw.AttentionEfficiencyFor(fitted_precision);
  CostFactors f = fitted;
  f.peak_flops = fitted.peak_flops * peak_ratio;
  f.compute_efficiency = fitted.compute_efficiency * matmul_ratio;
  f.expert_efficiency = hw.ExpertEfficiencyFor(precision);  // the format's kernel, as the entry measured it
  f.head_rate = fitted.head_rate / (peak_ratio * matmul_ratio);  // the head's 16-bit rate stays
  for (auto& point : f.efficiency_curve) point.second *= matmul_ratio;
  // Attention's rate moves only as the entry's attention efficiency does (it
  // runs in 16-bit whatever the weights), now relative to the new peak.
  if (f.attention_curve.empty()) f.attention_curve = {{1.0, fitted.compute_efficiency}};
  for (auto& point : f.attention_curve) point.second *= attention_ratio / peak_ratio;
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
  lm_head_flops_ = 2.0 * static_cast<double>(s.vocab_size * s.hidden_size) / tp;
  const double heads = static_cast<double>(s.attn.num_heads) / tp;
  const double full_layers = static_cast<double>(s.CountLayers(LayerKind::kFullAttention));
  const double mla_layers = static_cast<double>(s.CountLayers(LayerKind::kMla));
  const double per_layer_standard = 4.0 * heads * static_cast<double>(s.attn.head_dim);
  const double per_layer_mla =
      2.0 * heads * static_cast<double>(s.mla.qk_nope_head_dim + s.mla.qk_rope_head_dim + s.mla.v_head_dim);
  // The absorbed form multiplies each head's query by the latent (rank + rope
  // dims) and the probabilities by the latent again (rank): an MQA whose one
  // KV head is the cached latent.
  const double per_layer_absorbed = 2.0 * heads * static_cast<double>(2 * s.mla.kv_lora_rank + s.mla.qk_rope_head_dim);
  attn_flops_per_pair_full_ = per_layer_standard * full_layers + per_layer_mla * mla_layers;
  attn_flops_per_pair_absorbed_ = per_layer_standard * full_layers + per_layer_absorbed * mla_layers;
  mla_decompress_flops_per_token_ =
      2.0 * heads * static_cast<double>(s.mla.kv_lora_rank * (s.mla.qk_nope_head_dim + s.mla.v_head_dim)) * mla_layers;
  attn_flops_per_pair_sliding_ = per_layer_standard * static_cast<double>(s.CountLayers(LayerKind::kSlidingAttention));
  moe_touch_ = s.IsMoe() ? static_cast<double>(s.moe.experts_per_token) / static_cast<double>(s.moe.num_experts) : 0;
  const double expert_flops = 2.0 * static_cast<double>(p.routed_experts) * moe_touch_;
  // Each tensor-parallel GPU multiplies the parts it holds whole (MLA's
  // down-projections, the routers) for every token, the rest for its share.
  const double whole = 2.0 * static_cast<double>(p.mixer_replicated + p.router);
  dense_flops_per_token_ = (per_token - expert_flops - whole) / tp + whole;
  model_dtype_flops_per_token_ = 2.0 * UnquantizedParamsPerGpu(p, m_.unquantized, m_.tensor_parallel);
  expert_flops_per_token_ = expert_flops / (tp * m_.data_parallel);
  moe_layers_ = static_cast<int>(
      std::count_if(s.layers.begin(), s.layers.end(), [](const LayerSpec& l) { return l.mlp == MlpKind::kMoe; }));
  activation_bytes_per_token_ = 2.0 * static_cast<double>(s.hidden_size);  // bf16 activations
  layers_ = static_cast<int>(s.layers.size());
  elementwise_bytes_per_token_ = ElementwiseBytesPerToken(s, m_.tensor_parallel);
  kernels_per_forward_ = KernelsPerForward(s, m_.weight_precision, m_.unquantized.attention);
  const std::string draft_precision = m_.unquantized.draft ? DTypeName(s.dtype) : m_.weight_precision;
  kernels_per_draft_pass_ = KernelsPerDraftPass(s, m_.draft_layers, draft_precision, m_.unquantized.attention);
}

void CostModel::Add(Step& step, int64_t c, int64_t n, bool samples, int32_t drafts) const {
  const double cd = static_cast<double>(c), nd = static_cast<double>(n);
  step.requests += 1;
  step.tokens += nd;
  if (drafts > 0) {
    step.drafting += 1;
    step.draft_passes = std::max(step.draft_passes, static_cast<double>(drafts));
  }
  step.samples += samples ? 1 : 0;
  // Token at position c + i attends to c + i + 1 keys (causal within the chunk).
  const double full = nd * cd + nd * (nd + 1) / 2;
  double sliding = 0;
  if (m_.sliding_window > 0) {
    const double w = static_cast<double>(m_.sliding_window);
    const double last = cd + nd;  // keys of the last token
    const double ramp_end = std::min(last, w);
    const double ramp = ramp_end > cd ? (ramp_end * (ramp_end + 1) - cd * (cd + 1)) / 2 : 0;
    sliding = ramp + std::max(0.0, last - std::max(cd, w)) * w;
  }
  step.attn_pairs_full += full;
  step.attn_pairs_sliding += sliding;
  // vLLM's MLA backends take a request of at most 1 + its drafts new tokens
  // as a decode (absorbed form); a prefill chunk expands its cached context.
  const bool decode = nd <= 1.0 + drafts;
  step.prompts += decode ? 0 : 1;
  const double per_pair = decode ? attn_flops_per_pair_absorbed_ : attn_flops_per_pair_full_;
  const double decompress = decode ? 0 : mla_decompress_flops_per_token_ * cd;
  step.attn_flops_scaled += (per_pair * full + attn_flops_per_pair_sliding_ * sliding + decompress) /
                            f_.AttentionEfficiencyAt(nd);
  step.kv_bytes += static_cast<double>(m_.full_bytes_per_token) * (cd + nd) +
                   static_cast<double>(m_.sliding_bytes_per_token) *
                       std::min(cd + nd, static_cast<double>(m_.sliding_window) + nd) +
                   2.0 * static_cast<double>(m_.state_bytes);
}

double CostModel::MatmulSeconds(const Step& s) const {
  // A GPU computes its replica's share of the dense layers and the LM head,
  // and its share of every replica's routed tokens (ExpertMatmulSeconds).
  const double dp = m_.data_parallel;
  // The LM head and what the checkpoint leaves unquantized run at the 16-bit rate.
  const double quantized = dense_flops_per_token_ - model_dtype_flops_per_token_;
  const double model_dtype = model_dtype_flops_per_token_ * s.tokens + lm_head_flops_ * s.samples;
  const double dense = (quantized * s.tokens + model_dtype / f_.head_rate) / dp;
  return dense / (f_.peak_flops * f_.EfficiencyAt(s.tokens / dp)) + ExpertMatmulSeconds(s);
}

double CostModel::ExpertMatmulSeconds(const Step& s) const {
  // Under expert parallelism the busiest GPU's tokens, the imbalance times
  // the mean; tensor-sliced experts split evenly.
  if (expert_flops_per_token_ <= 0) return 0;  // a dense model: no second interpolation a step
  const double expert_scale = m_.expert_parallel > 1 ? m_.routing_imbalance : 1.0;
  const double flops = expert_flops_per_token_ * expert_scale * s.tokens;
  return flops / (f_.peak_flops * f_.ExpertEfficiencyAt(s.tokens / m_.data_parallel));
}

double CostModel::AttentionSeconds(const Step& s) const {
  return s.attn_flops_scaled / (f_.peak_flops * m_.data_parallel);
}

double CostModel::WeightSeconds(const Step& s) const {
  double weights = static_cast<double>(m_.weight_bytes - m_.unread_weight_bytes);
  if (moe_touch_ > 0 && s.tokens > 0) {
    // Each token picks k of E experts per layer: the share of experts the
    // step reads is 1 - (1 - k/E)^tokens (routing taken as uniform; the
    // busiest expert-parallel GPU sees `routing_imbalance` times the tokens).
    const double load = m_.expert_parallel > 1 ? s.tokens * m_.routing_imbalance : s.tokens;
    const double touched = 1.0 - std::pow(1.0 - moe_touch_, load);
    weights -= static_cast<double>(m_.expert_weight_bytes) * (1.0 - touched);
  }
  return weights / Bandwidth();
}

double CostModel::KvSeconds(const Step& s) const { return s.kv_bytes / (Bandwidth() * m_.data_parallel); }

double CostModel::ElementwiseSeconds(const Step& s) const {
  // Each GPU of a replica passes over all of the replica's tokens.
  return s.tokens / m_.data_parallel * elementwise_bytes_per_token_ / Bandwidth();
}

double CostModel::ComputeSeconds(const Step& s) const { return MatmulSeconds(s) + AttentionSeconds(s); }

double CostModel::MemorySeconds(const Step& s) const { return WeightSeconds(s) + KvSeconds(s); }

double CostModel::Bandwidth() const { return f_.bandwidth * f_.bandwidth_efficiency; }

double CostModel::Link() const {
  return f_.link_bandwidth > 0 ? f_.link_bandwidth : 32e9;  // unknown link: PCIe 4.0 x16
}

double CostModel::AllReduceSeconds(double tokens) const {
  const int tp = m_.tensor_parallel;
  if (tp <= 1 || tokens <= 0) return 0;
  return f_.link_latency_s + 2.0 * (tp - 1) / tp * tokens * activation_bytes_per_token_ / Link();
}

double CostModel::CommunicationSeconds(const Step& s) const {
  const int tp = m_.tensor_parallel, dp = m_.data_parallel;
  if ((tp <= 1 && dp <= 1) || s.tokens <= 0) return 0;
  // A replica's activations: two all-reduces per layer among its tp GPUs
  // (after attention and after the MLP); a ring all-reduce moves
  // 2 (n - 1) / n of the payload.
  const double per_reduce = AllReduceSeconds(s.tokens / dp);
  if (dp <= 1) return 2.0 * layers_ * per_reduce;
  // Across replicas an MoE layer gathers every replica's tokens to every GPU
  // of the group and reduce-scatters the experts' outputs back (vLLM's
  // default all-to-all, allgather_reducescatter): two ring collectives over
  // the tp x dp GPUs, each moving (n - 1) / n of all the step's activations.
  // The attention and dense layers still all-reduce within the replica.
  const double n = static_cast<double>(tp) * dp;
  const double per_collective = f_.link_latency_s + (n - 1) / n * s.tokens * activation_bytes_per_token_ / Link();
  return (2.0 * layers_ - moe_layers_) * per_reduce + 2.0 * moe_layers_ * per_collective;
}

double CostModel::DraftSeconds(const Step& s) const {
  if (s.draft_passes <= 0 || m_.draft_params <= 0) return 0;
  // The drafter runs once per draft token over the drafting requests, each
  // pass reading its weights and computing one token per request.
  const double drafting = s.drafting / m_.data_parallel;  // each replica drafts for its own
  // Its layers at the weights' rate (the head's where the checkpoint leaves
  // them unquantized), the LM head (its last part) at the head's.
  const double head = std::min(lm_head_flops_ / 2, static_cast<double>(m_.draft_params));
  const double join = static_cast<double>(m_.draft_join_params);
  const double layers = std::max(0.0, static_cast<double>(m_.draft_params) - head - join);
  const double sixteen_bit = head + join + (m_.unquantized.draft ? layers : 0);
  const double flops = 2.0 * ((m_.unquantized.draft ? 0 : layers) + sixteen_bit / f_.head_rate) * drafting;
  const double compute = flops / (f_.peak_flops * f_.EfficiencyAt(drafting));
  const double memory = static_cast<double>(m_.draft_weight_bytes) / Bandwidth();
  // Its layers all-reduce among the tensor-parallel GPUs as the target's do.
  const double reduces = 2.0 * m_.draft_layers * AllReduceSeconds(drafting);
  return s.draft_passes * (std::max(compute, memory) + reduces + kernels_per_draft_pass_ * f_.kernel_latency_s);
}

double CostModel::KernelSeconds(const Step& s) const {
  return s.tokens > 0 ? kernels_per_forward_ * f_.kernel_latency_s : 0;
}

Status CheckFactors(const CostFactors& f, const std::string& where) {
  const auto bad = [&](const char* what) { return Status::InvalidArgument(where + ": " + what); };
  if (!(f.peak_flops > 0) || !(f.bandwidth > 0)) return bad("peak_flops and bandwidth must be positive");
  if (!(f.compute_efficiency > 0 && f.compute_efficiency <= 1) ||
      !(f.bandwidth_efficiency > 0 && f.bandwidth_efficiency <= 1)) {
    return bad("efficiencies must be in (0, 1]");
  }
  if (!(f.expert_efficiency >= 0 && f.expert_efficiency <= 1)) return bad("expert_efficiency must be in [0, 1]");
  if (!(f.head_rate > 0)) return bad("head_rate must be positive");
  if (f.step_overhead_s < 0 || f.per_sequence_s < 0 || f.frontend_latency_s < 0 || f.kernel_latency_s < 0 ||
      f.eager_kernel_s < 0 || f.link_latency_s < 0 || f.graph_max_batch < 0) {
    return bad(
        "overheads, the front end's, kernels' and all-reduces' latencies, eager launches and the CUDA graphs' largest "
        "batch must be >= 0");
  }
  if (!(f.overlap >= 0 && f.overlap <= 1)) return bad("overlap must be in [0, 1]");
  for (const auto* curve : {&f.efficiency_curve, &f.attention_curve}) {
    double last = 0;
    for (const auto& [tokens, eff] : *curve) {
      if (!(tokens > last) || !(eff > 0 && eff <= 1)) {
        return bad("efficiency curves must list [tokens, efficiency] with tokens rising and efficiency in (0, 1]");
      }
      last = tokens;
    }
  }
  return Status::Ok();
}

double RooflineSeconds(double compute_s, double memory_s, double overlap) {
  return std::max(compute_s, memory_s) + (1 - overlap) * std::min(compute_s, memory_s);
}

double CostModel::Seconds(const Step& s) const { return Explain(s).total; }

CostModel::StepCost CostModel::Explain(const Step& s) const {
  StepCost c;
  if (s.tokens <= 0) return c;
  c.matmul = MatmulSeconds(s), c.weights = WeightSeconds(s);
  c.matmul_phase = RooflineSeconds(c.matmul, c.weights, f_.overlap);
  c.attention = AttentionSeconds(s), c.kv = KvSeconds(s);
  c.attention_phase = RooflineSeconds(c.attention, c.kv, f_.overlap);
  c.communication = CommunicationSeconds(s), c.drafting = DraftSeconds(s), c.kernels = KernelSeconds(s);
  c.elementwise = ElementwiseSeconds(s);
  c.gpu = c.matmul_phase + c.attention_phase + c.elementwise + c.communication + c.drafting + c.kernels;
  // Eager launches run ahead of the GPU while its kernels are long and hold it
  // up while they are short: the step takes the longer of the two.
  const bool eager = s.prompts > 0 || (f_.graph_max_batch > 0 && s.requests / m_.data_parallel > f_.graph_max_batch);
  c.launches = eager ? kernels_per_forward_ * f_.eager_kernel_s : 0;
  c.gpu = std::max(c.gpu, c.launches);
  // Each replica's host prepares its own requests, alongside the others.
  c.host = f_.step_overhead_s + f_.per_sequence_s * s.requests / m_.data_parallel;
  c.total = f_.async_scheduling ? std::max(c.host, c.gpu) : c.host + c.gpu;
  return c;
}

}  // namespace goodput
