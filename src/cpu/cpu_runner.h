// CpuModelRunner: a Llama-family transformer forward pass over one step's
// mixed batch. Every scheduled token (prefill chunks and decodes of many
// requests) is one row of a token matrix for the matmuls; attention runs per
// request over its paged KV blocks; the LM head runs only on rows that sample.
#pragma once

#include <memory>
#include <random>
#include <unordered_map>
#include <vector>

#include "core/status.h"
#include "cpu/attention.h"
#include "cpu/kv_store.h"
#include "cpu/rope.h"
#include "cpu/weights.h"
#include "engine/kv_cache_manager.h"
#include "engine/step.h"
#include "model/model_spec.h"

namespace goodput::cpu {

// How a model's layers map onto KV cache groups and storage slots: full
// attention layers form one group, sliding-window layers another.
struct CpuKvLayout {
  std::vector<KvGroupSpec> groups;
  std::vector<int> layer_group;  // per layer
  std::vector<int> layer_slot;   // per layer: storage slot (index within its group)
  int num_slots = 0;
};
CpuKvLayout MakeCpuKvLayout(const ModelSpec& m, int64_t block_size);

// KV blocks that fit in `bytes` (each block id takes a page in every slot).
int64_t CpuKvBlocksFor(const ModelSpec& m, const CpuKvLayout& layout, KvFormat format, int64_t block_size,
                       int64_t bytes);

class CpuModelRunner final : public ModelRunner {
 public:
  static Result<std::unique_ptr<CpuModelRunner>> Create(const ModelSpec& m, ModelWeights weights,
                                                        const CpuKvLayout& layout, KvFormat format,
                                                        int64_t num_blocks, int64_t block_size);

  StepResult Execute(const StepPlan& plan) override;

  // The logits of the last step's sampled rows, in plan order (for tests).
  const std::vector<std::vector<float>>& last_logits() const { return last_logits_; }
  void keep_logits(bool keep) { keep_logits_ = keep; }

 private:
  CpuModelRunner(const ModelSpec& m, ModelWeights w, CpuKvLayout layout, Rope rope, KvFormat format,
                 int64_t num_blocks, int64_t block_size);
  void Layer(int l, const StepPlan& plan, int64_t rows);
  void Attend(int l, const StepPlan& plan);
  void Sample(const StepPlan& plan, StepResult& result);

  ModelSpec m_;
  ModelWeights w_;
  CpuKvLayout layout_;
  Rope rope_;
  KvStore kv_;
  std::unordered_map<RequestId, std::mt19937_64> rngs_;      // per request, seeded when it (re)starts
  std::unordered_map<RequestId, SamplingParams> sampling_;
  std::vector<int64_t> positions_;
  std::vector<float> x_, xn_, qkv_, q_, attn_, gate_up_, act_, cos_, sin_;
  AttentionScratch attention_scratch_[2];  // one per thread
  bool keep_logits_ = false;
  std::vector<std::vector<float>> last_logits_;
};

}  // namespace goodput::cpu
