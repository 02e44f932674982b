// The roofline cost model of one engine step (DESIGN.md §2):
//   step time = overhead + max(compute time, memory time)
// memory: the weights are read once per step (MoE layers only the experts
// the step's tokens touch), plus every scheduled request's KV context per
// layer kind (sliding layers up to the window, state layers their fixed
// state, read and written); compute: dense-matmul FLOPs of the scheduled
// tokens, the LM head where a token is sampled, and attention over each
// token's context. Per GPU under tensor parallelism (communication is not
// modelled). Peaks are the hardware entry's dense figures for the weight
// precision, scaled by its efficiency factors.
#pragma once

#include <cstdint>

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
  int64_t expert_weight_bytes = 0;    // per GPU, routed experts only
  std::string weight_precision = "bf16";
  int tensor_parallel = 1;
  // Cache bytes per GPU (from the KV layout): per token of context summed
  // over full-attention/MLA layers, the same for sliding layers, and per
  // sequence for state layers.
  int64_t full_bytes_per_token = 0;
  int64_t sliding_bytes_per_token = 0;
  int64_t sliding_window = 0;
  int64_t state_bytes = 0;
};

struct CostFactors {
  double peak_flops = 0;      // FLOP/s for the weight precision
  double bandwidth = 0;       // bytes/s
  double compute_efficiency = 0.6;
  double bandwidth_efficiency = 0.85;
  double step_overhead_s = 0.0005;
};

// The hardware entry's peak for a weight precision (fp8/int8 use FP8 tensor
// cores, fp4 formats FP4 where present; weight-only int4 runs in BF16) and
// its factors.
Result<CostFactors> FactorsFor(const HardwareSpec& hw, const std::string& weight_precision);

class CostModel {
 public:
  CostModel(DeployedModel model, CostFactors factors);

  // One step's work, accumulated request by request.
  struct Step {
    double tokens = 0;       // tokens computed
    double samples = 0;      // positions that run the LM head
    double attn_pairs_full = 0;     // (query, key) pairs over full/MLA layers
    double attn_pairs_sliding = 0;  // over sliding layers
    double kv_bytes = 0;
  };
  // Adds a request computing `num_new` tokens after `num_computed`.
  void Add(Step& step, int64_t num_computed, int64_t num_new, bool samples) const;
  double Seconds(const Step& step) const;
  double ComputeSeconds(const Step& step) const;
  double MemorySeconds(const Step& step) const;

  const DeployedModel& model() const { return m_; }
  const CostFactors& factors() const { return f_; }

 private:
  DeployedModel m_;
  CostFactors f_;
  double linear_flops_per_token_ = 0;
  double lm_head_flops_ = 0;
  double attn_flops_per_pair_full_ = 0;
  double attn_flops_per_pair_sliding_ = 0;
  double moe_touch_ = 0;  // k / E
};

}  // namespace goodput
