#include "cpu/cpu_runner.h"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

#include "cpu/attention.h"
#include "cpu/kernels.h"
#include "cpu/sampler.h"
#include "cpu/small_matmul.h"

namespace goodput::cpu {

CpuKvLayout MakeCpuKvLayout(const ModelSpec& m, int64_t block_size) {
  CpuKvLayout out;
  int full = -1, sliding = -1;
  std::vector<int> count;
  for (const auto& l : m.layers) {
    int& g = l.kind == LayerKind::kSlidingAttention ? sliding : full;
    if (g < 0) {
      g = static_cast<int>(out.groups.size());
      KvGroupSpec spec;
      spec.block_size = block_size;
      if (l.kind == LayerKind::kSlidingAttention) {
        spec.type = KvGroupSpec::Type::kSlidingWindow;
        spec.sliding_window = l.sliding_window;
      }
      out.groups.push_back(spec);
      count.push_back(0);
    }
    out.layer_group.push_back(g);
    out.layer_slot.push_back(count[g]++);
  }
  out.num_slots = count.empty() ? 0 : *std::max_element(count.begin(), count.end());
  return out;
}

int64_t CpuKvBlocksFor(const ModelSpec& m, const CpuKvLayout& layout, KvFormat format, int64_t block_size,
                       int64_t bytes) {
  const int64_t per_block =
      KvStore::BlockBytes(format, block_size, m.attn.num_kv_heads, m.attn.head_dim) * layout.num_slots;
  return per_block > 0 ? bytes / per_block : 0;
}

CpuModelRunner::CpuModelRunner(const ModelSpec& m, ModelWeights w, CpuKvLayout layout, Rope rope, KvFormat format,
                               int64_t num_blocks, int64_t block_size)
    : m_(m),
      w_(std::move(w)),
      layout_(std::move(layout)),
      rope_(std::move(rope)),
      kv_(format, num_blocks, block_size, m.attn.num_kv_heads, m.attn.head_dim, layout_.layer_slot, layout_.num_slots) {
}

Result<std::unique_ptr<CpuModelRunner>> CpuModelRunner::Create(const ModelSpec& m, ModelWeights weights,
                                                               const CpuKvLayout& layout, KvFormat format,
                                                               int64_t num_blocks, int64_t block_size) {
  GOODPUT_RETURN_IF_ERROR(CheckCpuSupported(m));
  if (static_cast<int64_t>(weights.layers.size()) != m.num_layers) {
    return Status::InvalidArgument("weights and config disagree on the number of layers");
  }
  if (num_blocks < 1) return Status::InvalidArgument("the KV cache has no blocks");
  GOODPUT_ASSIGN_OR_RETURN(Rope rope, Rope::Create(m.rope, m.attn.head_dim, m.max_position_embeddings));
  return std::unique_ptr<CpuModelRunner>(
      new CpuModelRunner(m, std::move(weights), layout, std::move(rope), format, num_blocks, block_size));
}

void CpuModelRunner::Layer(int l, const StepPlan& plan, int64_t rows) {
  const int64_t h = m_.hidden_size, hd = m_.attn.head_dim, nh = m_.attn.num_heads, nkv = m_.attn.num_kv_heads;
  const int64_t q_dim = nh * hd, kv_dim = nkv * hd, qkv_dim = q_dim + 2 * kv_dim, inter = m_.intermediate_size;
  const LayerWeights& w = w_.layers[l];
  const float eps = static_cast<float>(m_.rms_norm_eps);
  RmsNorm(x_.data(), w.attn_norm.data(), xn_.data(), rows, h, eps);
  MatMulT(xn_.data(), w.wqkv.data(), qkv_.data(), rows, qkv_dim, h);
  const int64_t half = rope_.rotary_dim() / 2;
  for (int64_t r = 0; r < rows; ++r) {
    float* row = &qkv_[r * qkv_dim];
    rope_.Apply(row, nh, hd, &cos_[r * half], &sin_[r * half]);
    rope_.Apply(row + q_dim, nkv, hd, &cos_[r * half], &sin_[r * half]);
    std::copy(row, row + q_dim, &q_[r * q_dim]);
  }
  const int group = layout_.layer_group[l];
  int64_t row0 = 0;
  for (const ScheduledRequest& s : plan.requests) {
    const std::vector<int32_t>& blocks = s.blocks->groups[group];
    const int64_t bs = kv_.block_size();
    for (int64_t i = 0; i < s.num_new; ++i) {
      const int64_t pos = s.num_computed + i;
      const float* row = &qkv_[(row0 + i) * qkv_dim];
      kv_.Write(l, blocks[pos / bs], pos % bs, row + q_dim, row + q_dim + kv_dim);
    }
    row0 += s.num_new;
  }
  Attend(l, plan);
  MatMulT(attn_.data(), w.wo.data(), x_.data(), rows, h, q_dim, /*accumulate=*/true);
  RmsNorm(x_.data(), w.mlp_norm.data(), xn_.data(), rows, h, eps);
  MatMulT(xn_.data(), w.w_gate_up.data(), gate_up_.data(), rows, 2 * inter, h);
  SiluMul(gate_up_.data(), act_.data(), rows, inter);
  MatMulT(act_.data(), w.w_down.data(), x_.data(), rows, h, inter, /*accumulate=*/true);
}

// The layer's attention over two threads: the (request, KV head) pairs in
// plan order, cut where the first thread's share of attended keys reaches
// half, so one long request's heads are shared too.
void CpuModelRunner::Attend(int l, const StepPlan& plan) {
  const int64_t nkv = m_.attn.num_kv_heads, q_dim = m_.attn.num_heads * m_.attn.head_dim;
  const int group = layout_.layer_group[l];
  const int64_t window = layout_.groups[group].sliding_window;
  std::vector<int64_t> row0(plan.requests.size() + 1, 0);
  std::vector<double> keys(plan.requests.size());  // attended keys per KV head
  double total = 0;
  for (size_t r = 0; r < plan.requests.size(); ++r) {
    const ScheduledRequest& s = plan.requests[r];
    const int64_t seen = window > 0 ? std::min(s.num_computed, window) : s.num_computed;
    keys[r] = static_cast<double>(s.num_new) * static_cast<double>(seen + s.num_new);
    total += keys[r] * static_cast<double>(nkv);
    row0[r + 1] = row0[r] + s.num_new;
  }
  int64_t cut = 0;  // pairs [0, cut) on the helper thread
  for (double done = 0; cut < static_cast<int64_t>(plan.requests.size()) * nkv && 2 * done < total; ++cut) {
    done += keys[cut / nkv];
  }
  const AttentionShape shape{m_.attn.num_heads, nkv, m_.attn.head_dim};
  const auto pairs = [&, this](int64_t from, int64_t to, AttentionScratch& scratch) {
    for (int64_t p = from; p < to;) {
      const size_t r = static_cast<size_t>(p / nkv);
      const int64_t end = std::min(to, static_cast<int64_t>(r + 1) * nkv);
      const ScheduledRequest& s = plan.requests[r];
      const ChunkView chunk{s.num_computed, s.num_new, &s.blocks->groups[group], window};
      PagedAttention(kv_, l, shape, chunk, &q_[row0[r] * q_dim], &attn_[row0[r] * q_dim], scratch, p % nkv,
                     end - static_cast<int64_t>(r) * nkv);
      p = end;
    }
  };
  const int64_t all = static_cast<int64_t>(plan.requests.size()) * nkv;
  RunOnTwoThreads([&] { pairs(0, cut, attention_scratch_[1]); }, [&] { pairs(cut, all, attention_scratch_[0]); });
}

void CpuModelRunner::Sample(const StepPlan& plan, StepResult& result) {
  const int64_t h = m_.hidden_size, vocab = m_.vocab_size;
  std::vector<int64_t> sample_rows;
  int64_t row = 0;
  for (const ScheduledRequest& s : plan.requests) {
    row += s.num_new;
    if (s.samples) sample_rows.push_back(row - 1);
  }
  const auto n = static_cast<int64_t>(sample_rows.size());
  std::vector<float> picked(n * h), normed(n * h), logits(n * vocab);
  for (int64_t i = 0; i < n; ++i) std::copy(&x_[sample_rows[i] * h], &x_[sample_rows[i] * h] + h, &picked[i * h]);
  RmsNorm(picked.data(), w_.final_norm.data(), normed.data(), n, h, static_cast<float>(m_.rms_norm_eps));
  if (n > 0) MatMulT(normed.data(), w_.LmHead(), logits.data(), n, vocab, h);
  last_logits_.clear();
  int64_t i = 0;
  for (const ScheduledRequest& s : plan.requests) {
    if (!s.samples) continue;
    std::vector<float> lg(logits.begin() + i * vocab, logits.begin() + (i + 1) * vocab);
    if (keep_logits_) last_logits_.push_back(lg);
    auto& rng = rngs_[s.id];
    const SamplingParams& sp = sampling_[s.id];
    const std::vector<float> raw = sp.logprobs >= 0 ? lg : std::vector<float>();  // SampleToken may transform lg
    const int32_t token = SampleToken(lg, sp, rng);
    std::vector<TokenLogprob> logprobs;
    if (sp.logprobs >= 0) logprobs.push_back(LogprobOf(raw, token, sp.logprobs));
    result.sampled.push_back(SampledTokens{s.id, 1, {token}, std::move(logprobs)});
    ++i;
  }
}

StepResult CpuModelRunner::Execute(const StepPlan& plan) {
  for (RequestId id : plan.released) {
    rngs_.erase(id);
    sampling_.erase(id);
  }
  const int64_t rows = plan.num_batched_tokens, h = m_.hidden_size, hd = m_.attn.head_dim;
  const int64_t q_dim = m_.attn.num_heads * hd, qkv_dim = q_dim + 2 * m_.attn.num_kv_heads * hd;
  const int64_t half = rope_.rotary_dim() / 2;
  x_.resize(rows * h);
  xn_.resize(rows * h);
  qkv_.resize(rows * qkv_dim);
  q_.resize(rows * q_dim);
  attn_.resize(rows * q_dim);
  gate_up_.resize(rows * 2 * m_.intermediate_size);
  act_.resize(rows * m_.intermediate_size);
  cos_.resize(rows * half);
  sin_.resize(rows * half);
  int64_t r = 0;
  for (const ScheduledRequest& s : plan.requests) {
    if (s.num_draft != 0 || static_cast<int64_t>(s.token_ids.size()) != s.num_new) {
      throw std::logic_error("CpuModelRunner: every scheduled token needs its id, and drafts are not verified here");
    }
    // A request restarted after preemption keeps its RNG: sampling goes on where it was.
    if (s.restarted && !rngs_.count(s.id)) {
      sampling_[s.id] = s.sampling;
      rngs_[s.id].seed(s.sampling.seed);
    }
    for (int64_t i = 0; i < s.num_new; ++i, ++r) {
      const int32_t token = s.token_ids[i];
      std::copy(&w_.embed[token * h], &w_.embed[token * h] + h, &x_[r * h]);
      rope_.Angles(s.num_computed + i, &cos_[r * half], &sin_[r * half]);
    }
  }
  for (int l = 0; l < static_cast<int>(m_.num_layers); ++l) Layer(l, plan, rows);
  StepResult result;
  Sample(plan, result);
  return result;
}

}  // namespace goodput::cpu
