// The roofline cost model of one engine step (docs/architecture.md), two phases in
// sequence (the matmuls stream the weights; attention streams the KV cache),
// each its own roofline:
//   step time = overhead + per-request cost x requests + kernels x kernel latency
//             + roof(matmul FLOPs, weight bytes) + roof(attention FLOPs, KV bytes)
//             + tensor-parallel all-reduces + data-parallel expert all-gathers
//             + drafting
//   roof(c, m) = max(c, m) + (1 - overlap) x min(c, m)
// and a step computing a prompt, where the engine runs such steps eagerly,
// takes at least its kernels x the host's launch (CostFactors::eager_kernel_s).
// memory: the weights are read once per step (MoE layers only the experts
// the step's tokens touch; not a vision tower or an untied input
// embedding), plus every scheduled request's KV context per layer kind
// (sliding layers up to the window, state layers their fixed state, read
// and written); compute: dense-matmul FLOPs of the scheduled
// tokens, the LM head where a token is sampled, and attention over each
// token's context, at an efficiency that may depend on the step's token count
// (small matmuls run far below peak). Per GPU under tensor parallelism, with
// two all-reduces of the step's activations per layer over the GPUs' link;
// under expert parallelism each GPU computes its experts' tokens, the busiest
// `routing_imbalance` times the mean; data-parallel replicas share the step
// evenly and gather their tokens for every MoE layer (DeployedModel). Speculative decoding adds the
// drafter's passes (its weights, its kernels and, under tensor parallelism, its
// layers' all-reduces). Every kernel of the forward pass (hw/kernel_count.h)
// adds a fixed latency beyond its work. MLA attends in vLLM's two forms: a
// decode in the absorbed form (an MQA over the latent: 2 x heads x (2 x rank
// + rope) FLOPs per query-key pair), a prefill in the expanded form (per-head
// K and V, after decompressing any cached context). Peaks are the hardware entry's dense figures for the
// weight precision; the factors come from the entry or a calibration.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "core/status.h"
#include "hw/hardware.h"
#include "model/model_spec.h"
#include "model/params.h"

namespace goodput {

// What the cost model needs to know about the model as deployed.
struct DeployedModel {
  ModelSpec model;
  ParamCounts params;
  int64_t weight_bytes = 0;           // per GPU
  // Per GPU, part of weight_bytes a step does not read (the vision tower, an
  // untied input embedding table: UnreadWeightBytes in plan/weights.h).
  int64_t unread_weight_bytes = 0;
  int64_t expert_weight_bytes = 0;    // per GPU, routed experts only
  std::string weight_precision = "bf16";
  int tensor_parallel = 1;
  // Data-parallel replicas (vLLM's --data-parallel-size), each of
  // tensor_parallel GPUs with its own requests and KV cache, stepping
  // together because their MoE layers span all data_parallel x
  // tensor_parallel GPUs. A step's requests are all replicas' and are taken
  // as spread evenly: each GPU computes and reads 1/data_parallel of their
  // attention and dense layers and its share of every replica's expert
  // tokens, which every MoE layer gathers to all GPUs and scatters back.
  int data_parallel = 1;
  // Cache bytes per GPU (from the KV layout): per token of context summed
  // over full-attention/MLA layers, the same for sliding layers, and per
  // sequence for state layers.
  int64_t full_bytes_per_token = 0;
  int64_t sliding_bytes_per_token = 0;
  int64_t sliding_window = 0;
  int64_t state_bytes = 0;
  // Expert parallelism: each of `expert_parallel` GPUs (tp x dp) holds E / ep
  // whole experts (instead of a 1/(tp x dp) slice of each); the busiest GPU
  // gets `routing_imbalance` times the mean token load.
  int expert_parallel = 1;
  double routing_imbalance = 1.0;
  // A drafter (EAGLE-style layers) run once per draft token of a step.
  int64_t draft_params = 0;     // per GPU
  int64_t draft_weight_bytes = 0;
  // Of those, the projection joining the target's hidden state and the
  // token's embedding (DeepSeek's MTP eh_proj, EAGLE's fc, Qwen's mtp.fc:
  // 2 x hidden x hidden, whole on each GPU or its share where the model's code
  // splits it), which checkpoints keep in the model dtype: multiplied at the
  // 16-bit rate.
  int64_t draft_join_params = 0;
  // Parts of the linear layers the checkpoint leaves in the model dtype (read
  // into weight_bytes already): multiplied at the 16-bit rate, as the LM head.
  UnquantizedParts unquantized;
  int draft_layers = 0;         // decoder layers per draft pass (DeepSeek's MTP: 1)
};

struct CostFactors {
  double peak_flops = 0;      // FLOP/s for the weight precision
  double bandwidth = 0;       // bytes/s
  double compute_efficiency = 0.6;
  // The routed experts' matmuls (a grouped GEMM over each expert's few rows,
  // a kernel of its own) at this efficiency of peak_flops instead; 0: at the
  // dense matmuls' (EfficiencyAt).
  double expert_efficiency = 0;
  // The LM head's matmul rate over the weights' (peak_flops x efficiency):
  // quantized checkpoints keep the head in the model's 16-bit dtype, as the
  // planner counts its bytes, so it runs at the card's 16-bit rate (FactorsFor
  // sets the ratio); 1: at the weights' rate.
  double head_rate = 1.0;
  double bandwidth_efficiency = 0.85;
  double step_overhead_s = 0.0005;
  double per_sequence_s = 0;  // host-side cost per scheduled request (inputs, sampling, bookkeeping)
  // The engine prepares the next step on the host while the GPU runs this one
  // (vLLM's --async-scheduling, SGLang's and TensorRT-LLM's overlap
  // schedulers): a step takes the longer of the host's work (step overhead and
  // per-request cost) and the GPU's, not their sum.
  bool async_scheduling = false;
  // The host's time to launch one kernel of a step that computes a prompt,
  // where the engine runs such steps eagerly (SGLang's and TensorRT-LLM's
  // PyTorch backend capture CUDA graphs for decode-only steps): the GPU then
  // waits on the launches, so the step's GPU time is at least its kernels
  // times this. 0: prompt steps replay graphs as decodes do (vLLM V1's
  // piecewise graphs).
  double eager_kernel_s = 0;
  // The most requests a decode-only step runs under a CUDA graph, per
  // data-parallel replica (SGLang's --cuda-graph-max-bs): a larger one runs
  // eagerly, its launches timed as a prompt step's (eager_kernel_s). 0: every
  // decode-only step replays a graph.
  int64_t graph_max_batch = 0;
  double overlap = 1.0;       // 1: a phase's compute and memory fully overlap (max); 0: they add up
  // Attention efficiency by a request's query tokens in the step (a decode's
  // one row reads its whole context; a prefill chunk's rows share it), log-
  // interpolated; empty: compute_efficiency.
  std::vector<std::pair<double, double>> attention_curve;
  // Compute efficiency by tokens in the step, interpolated in log(tokens)
  // (constant beyond the ends); empty: compute_efficiency throughout.
  std::vector<std::pair<double, double>> efficiency_curve;
  double link_bandwidth = 0;  // bytes/s per direction between tensor-parallel GPUs
  double link_latency_s = 0;  // per all-reduce
  // A kernel's time beyond its work (the gap between kernels in a CUDA graph,
  // ramp-up and tail), once per kernel of the step's forward pass.
  double kernel_latency_s = 0;
  // Not part of a step: the engine's front end (vLLM's API server: HTTP,
  // chat template, tokenizing, the hand-over to the engine and the first
  // token's way back) as a fixed time every request takes between its
  // arrival and the scheduler seeing it, alongside the others. 0: the
  // scheduler sees a request when it arrives.
  double frontend_latency_s = 0;

  // The compute efficiency of a step of `tokens` tokens.
  double EfficiencyAt(double tokens) const;
  // The attention efficiency of a request computing `query_tokens` tokens.
  double AttentionEfficiencyAt(double query_tokens) const;
  // The routed experts' efficiency in a step of `tokens` tokens: their own,
  // else the dense matmuls' (EfficiencyAt).
  double ExpertEfficiencyAt(double tokens) const;
};

// The hardware entry's peak for a weight precision (fp8/int8 use FP8 tensor
// cores, fp4 formats FP4 where present; weight-only int4 runs in BF16) and
// its factors.
Result<CostFactors> FactorsFor(const HardwareSpec& hw, const std::string& weight_precision);

// Where weights in `weight_precision` (fp8, fp8-block, mxfp4, nvfp4) run on
// `hw` without a FLOP/s figure of their format (no tensor cores for it, as
// FP8 on Ampere or FP4 on Hopper and MI300X, or a card given without one):
// the engine then dequantizes them inside its kernels and multiplies in
// 16-bit ("weight-only", as vLLM's Marlin kernels do), and FactorsFor uses
// the 16-bit peak. Says so, as vLLM's start-up log warns; empty otherwise.
std::optional<std::string> WeightOnlyWarning(const HardwareSpec& hw, const std::string& weight_precision);

// `fitted` (a calibration's factors, fitted with weights in `fitted_precision`
// on `hw`, a catalog entry) for weights in `precision`: the matmuls move to
// that format's peak and the entry's efficiency for it, in the ratio the
// entry gives the two formats; attention keeps its rate but for the entry's
// attention efficiency of each. Errors: `hw` has no peak for either format.
Result<CostFactors> FactorsForWeights(const CostFactors& fitted, const HardwareSpec& hw,
                                      const std::string& fitted_precision, const std::string& precision);

// Whether `factors` can drive a cost model: positive peak and bandwidth,
// efficiencies in (0, 1], overheads and latencies >= 0, overlap in [0, 1],
// efficiency curves with rising tokens. Errors start with `where`.
Status CheckFactors(const CostFactors& factors, const std::string& where);

// One roofline phase: the longer of its compute and memory time, plus the
// share (1 - overlap) of the shorter that does not hide under it.
double RooflineSeconds(double compute_s, double memory_s, double overlap);

class CostModel {
 public:
  CostModel(DeployedModel model, CostFactors factors);

  // One step's work, accumulated request by request.
  struct Step {
    double requests = 0;     // requests scheduled
    double tokens = 0;       // tokens computed
    double samples = 0;      // positions that run the LM head
    double attn_pairs_full = 0;     // (query, key) pairs over full/MLA layers
    double attn_pairs_sliding = 0;  // over sliding layers
    double attn_flops_scaled = 0;   // attention FLOPs over each request's attention efficiency
    double kv_bytes = 0;
    double drafting = 0;     // requests that draft this step
    double draft_passes = 0; // the most drafts any of them proposes (the drafter runs that often)
    double prompts = 0;      // requests computing more than a decode's tokens (a prompt or its chunk)
  };
  // Adds a request computing `num_new` tokens after `num_computed` (with
  // `drafts` speculative tokens to propose for the next step).
  void Add(Step& step, int64_t num_computed, int64_t num_new, bool samples, int32_t drafts = 0) const;
  double Seconds(const Step& step) const;
  // A step's time by part (Seconds is `total`): each phase's compute and memory
  // time and the roofline of the two, the communication, drafting and kernel
  // latencies the GPU adds, and the host's work beside it.
  struct StepCost {
    double matmul = 0, weights = 0, matmul_phase = 0;   // roof(matmul, weights)
    double attention = 0, kv = 0, attention_phase = 0;  // roof(attention, kv)
    double communication = 0, drafting = 0, kernels = 0;
    double elementwise = 0;  // the norms' and the FFN activation's passes over the step's activations
    double launches = 0;  // an eager step's kernel launches (CostFactors::eager_kernel_s), 0 where graphs replay
    double gpu = 0;       // the two phases and the four after them, or the launches where longer
    double host = 0;   // step overhead and per-request cost
    double total = 0;  // host + gpu, or the longer of the two under async scheduling
  };
  StepCost Explain(const Step& step) const;
  double ComputeSeconds(const Step& step) const;   // matmuls and attention
  double MemorySeconds(const Step& step) const;    // weights and KV
  double MatmulSeconds(const Step& step) const;    // the dense layers, the LM head and the routed experts
  double ExpertMatmulSeconds(const Step& step) const;  // the routed experts' part of MatmulSeconds
  double AttentionSeconds(const Step& step) const;
  double WeightSeconds(const Step& step) const;
  double KvSeconds(const Step& step) const;
  double CommunicationSeconds(const Step& step) const;  // tensor-parallel all-reduces, expert all-to-alls
  double DraftSeconds(const Step& step) const;
  double KernelSeconds(const Step& step) const;  // the forward pass's kernels, each its fixed latency
  // The memory-bound kernels between the matmuls: each layer's fused
  // residual-add + RMSNorm passes (one a norm) and its FFN's activation-and-multiply.
  double ElementwiseSeconds(const Step& step) const;

  const DeployedModel& model() const { return m_; }
  const CostFactors& factors() const { return f_; }

 private:
  double Bandwidth() const;  // bytes/s a GPU reads at: the card's bandwidth at its efficiency
  double Link() const;  // bytes/s between tensor-parallel GPUs
  // One ring all-reduce of `tokens` tokens' activations among a replica's tensor-parallel GPUs.
  double AllReduceSeconds(double tokens) const;

  DeployedModel m_;
  CostFactors f_;
  double dense_flops_per_token_ = 0;  // per GPU: the linear layers but the routed experts
  double model_dtype_flops_per_token_ = 0;  // of those, the parts the checkpoint leaves in the model dtype
  double lm_head_flops_ = 0;
  double attn_flops_per_pair_full_ = 0;
  double attn_flops_per_pair_absorbed_ = 0;  // full/MLA layers, a decode in MLA's absorbed form
  double mla_decompress_flops_per_token_ = 0;  // a prefill expanding one cached latent token to K and V
  double attn_flops_per_pair_sliding_ = 0;
  double moe_touch_ = 0;  // k / E
  double expert_flops_per_token_ = 0;  // per GPU of the MoE group: the routed experts
  int moe_layers_ = 0;
  double activation_bytes_per_token_ = 0;  // one all-reduce's payload per token
  double elementwise_bytes_per_token_ = 0;  // per GPU, over every layer: ElementwiseSeconds
  int layers_ = 0;
  int kernels_per_forward_ = 0;
  int kernels_per_draft_pass_ = 0;
};

}  // namespace goodput
