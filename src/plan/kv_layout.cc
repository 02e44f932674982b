#include "plan/kv_layout.h"

#include <algorithm>

#include <fmt/format.h>

#include "core/units.h"
#include "engine/engine_config.h"

namespace goodput {
namespace {

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

// vLLM replicates KV heads when tensor parallelism exceeds their number.
int64_t LocalKvHeads(int64_t kv_heads, int tp) { return std::max<int64_t>(1, kv_heads / tp); }

int64_t AttentionBytesPerToken(const ModelSpec& m, LayerKind kind, const KvLayoutOptions& o) {
  const int64_t elem = DTypeBytes(o.kv_dtype);
  if (kind == LayerKind::kMla)
    return (m.mla.kv_lora_rank + m.mla.qk_rope_head_dim) * elem;  // one latent head, no TP split
  return 2 * LocalKvHeads(m.attn.num_kv_heads, o.tensor_parallel) * m.attn.head_dim * elem;
}

// Conv state (conv_dim x (kernel - 1)) plus recurrent state, per sequence per layer.
int64_t StateBytes(const ModelSpec& m, LayerKind kind, const KvLayoutOptions& o) {
  const int64_t tp = o.tensor_parallel;
  const int64_t conv = DTypeBytes(o.conv_state_dtype);
  const int64_t ssm = DTypeBytes(o.ssm_state_dtype);
  if (kind == LayerKind::kLinearAttention) {
    const LinearAttentionDims& d = m.linear;
    const int64_t conv_dim = 2 * d.num_key_heads * d.key_head_dim + d.num_value_heads * d.value_head_dim;
    return conv_dim / tp * (d.conv_kernel - 1) * conv +
           d.num_value_heads / tp * d.key_head_dim * d.value_head_dim * ssm;
  }
  const MambaDims& d = m.mamba;
  if (kind == LayerKind::kMamba2) {
    // Groups that do not split evenly are replicated (vLLM's extra_groups_for_head_shards).
    const int64_t extra = d.n_groups % tp == 0 ? 0 : tp - d.n_groups;
    const int64_t groups_local = (d.n_groups + extra) / tp;
    const int64_t conv_dim = d.d_inner / tp + 2 * groups_local * d.d_state;
    return conv_dim * (d.d_conv - 1) * conv + d.num_heads / tp * d.head_dim * d.d_state * ssm;
  }
  return d.d_inner / tp * (d.d_conv - 1) * conv + d.d_inner / tp * d.d_state * ssm;  // Mamba-1
}

CacheSpec LayerCacheSpec(const ModelSpec& m, const LayerSpec& l, const KvLayoutOptions& o, int64_t block) {
  CacheSpec s;
  s.kind = l.kind;
  s.group.block_size = block;
  if (IsStateKind(l.kind)) {
    s.group.type = KvGroupSpec::Type::kState;
    s.state_bytes = StateBytes(m, l.kind, o);
    return s;
  }
  s.bytes_per_token = AttentionBytesPerToken(m, l.kind, o);
  if (l.kind == LayerKind::kSlidingAttention && !o.disable_hybrid_kv_cache_manager) {
    s.group.type = KvGroupSpec::Type::kSlidingWindow;
    s.group.sliding_window = l.sliding_window;
  }
  return s;
}

// HybridAttentionMambaModelConfig: raise the attention block size until one
// attention page holds a state page, then pad the state page to match.
void FitStatePages(KvLayout& out, const KvLayoutOptions& o) {
  const CacheSpec* attn = nullptr;
  const CacheSpec* state = nullptr;
  for (const auto& s : out.layer_specs) {
    if (s.is_state()) state = state ? state : &s;
    else attn = attn ? attn : &s;
  }
  if (!state) return;
  out.state_page_bytes = state->state_bytes;
  if (!attn) return;
  const int64_t align = o.kernel_block_alignment;
  const int64_t needed = align * CeilDiv(state->state_bytes, align * attn->bytes_per_token);
  int64_t block = attn->group.block_size;
  if (o.block_size == 0 || block < needed) {
    block = needed;
    out.block_size_raised = true;
    out.log_lines.push_back(fmt::format(
        "Setting attention block size to {} tokens to ensure that attention page size is >= mamba page size.", block));
  }
  const int64_t attn_page = block * attn->bytes_per_token;
  if (attn_page > state->state_bytes) {
    out.state_padding_pct = 100.0 * static_cast<double>(attn_page - state->state_bytes) / state->state_bytes;
    out.log_lines.push_back(fmt::format(
        "Padding mamba page size by {:.2f}% to ensure that mamba page size and attention page size are exactly equal.",
        out.state_padding_pct));
  }
  for (auto& s : out.layer_specs) {
    s.group.block_size = block;
    if (s.is_state() && attn_page > s.state_bytes) s.padded_page_bytes = attn_page;
  }
}

// unify_kv_cache_spec_page_size: smaller pages grow by raising their block size.
Status UnifyPageSizes(KvLayout& out) {
  int64_t max_page = 0;
  for (const auto& s : out.layer_specs) max_page = std::max(max_page, s.PageBytes());
  for (auto& s : out.layer_specs) {
    const int64_t page = s.PageBytes();
    if (page == max_page) continue;
    if (s.is_state() || max_page % page != 0) {
      return Status::FailedPrecondition(
          "layer page sizes cannot be unified by adjusting the block size (vLLM raises NotImplementedError)");
    }
    s.group.block_size *= max_page / page;
  }
  out.page_bytes = max_page;
  return Status::Ok();
}

// _get_kv_cache_groups_uniform_page_size: buckets of identical specs, split
// into groups of `group_size` layers, padding the last group of a bucket.
void GroupLayers(KvLayout& out) {
  std::vector<std::vector<size_t>> buckets;  // indices into layer_specs, by first appearance
  for (size_t i = 0; i < out.layer_specs.size(); ++i) {
    auto it = std::find_if(buckets.begin(), buckets.end(),
                           [&](const auto& b) { return out.layer_specs[b[0]].SameCache(out.layer_specs[i]); });
    if (it == buckets.end()) buckets.push_back({i});
    else it->push_back(i);
  }
  size_t min_n = SIZE_MAX, max_n = 0;
  for (const auto& b : buckets) {
    min_n = std::min(min_n, b.size());
    max_n = std::max(max_n, b.size());
  }
  size_t group_size = min_n;
  if (buckets.size() == 1 || static_cast<double>(max_n) < static_cast<double>(min_n) * 1.25) group_size = max_n;
  out.group_size = static_cast<int64_t>(group_size);
  for (const auto& b : buckets) {
    const size_t padding = group_size - b.size() % group_size;
    if (padding != group_size) {
      out.padding_layers += static_cast<int64_t>(padding);
      out.log_lines.push_back(fmt::format("Add {} padding layers, may waste at most {:.2f}% KV cache memory", padding,
                                          100.0 * static_cast<double>(padding) / static_cast<double>(b.size())));
    }
    const size_t num_groups = (b.size() + group_size - 1) / group_size;
    for (size_t g = 0; g < num_groups; ++g) {
      CacheGroup group;
      group.spec = out.layer_specs[b[0]];
      for (size_t k = g; k < b.size(); k += num_groups) group.layers.push_back(out.layer_index[b[k]]);
      out.groups.push_back(std::move(group));
    }
  }
}

}  // namespace

const char* CacheSpec::TypeName() const {
  switch (group.type) {
    case KvGroupSpec::Type::kFull: return kind == LayerKind::kMla ? "MLA" : "full attention";
    case KvGroupSpec::Type::kSlidingWindow: return "sliding window";
    case KvGroupSpec::Type::kState: return "mamba state";
  }
  return "?";
}

bool CacheSpec::SameCache(const CacheSpec& o) const {
  const KvGroupSpec& g = group;
  return g.type == o.group.type && (g.type != KvGroupSpec::Type::kState || kind == o.kind) &&
         (kind == LayerKind::kMla) == (o.kind == LayerKind::kMla) && g.block_size == o.group.block_size &&
         bytes_per_token == o.bytes_per_token && state_bytes == o.state_bytes &&
         padded_page_bytes == o.padded_page_bytes && g.sliding_window == o.group.sliding_window;
}

int64_t KvLayout::NumBlocks(int64_t available_bytes) const {
  if (page_bytes <= 0 || group_size <= 0 || available_bytes <= 0) return 0;
  return available_bytes / page_bytes / group_size;
}

std::vector<KvGroupSpec> KvLayout::EngineGroups() const {
  std::vector<KvGroupSpec> out;
  for (const CacheGroup& g : groups) out.push_back(g.spec.group);
  return out;
}

Result<KvLayout> BuildKvLayout(const ModelSpec& m, const KvLayoutOptions& o) {
  if (o.tensor_parallel < 1) return Status::InvalidArgument("tensor parallel size must be at least 1");
  if (o.max_model_len < 1) return Status::InvalidArgument("max model length must be at least 1");
  if (o.block_size < 0 || o.kernel_block_alignment < 1) return Status::InvalidArgument("block size must be positive");
  const bool has_mla = m.CountLayers(LayerKind::kMla) > 0;
  const int64_t block = o.block_size > 0 ? o.block_size : (has_mla ? kDefaultMlaBlockSize : kDefaultBlockSize);
  KvLayout out;
  for (size_t i = 0; i < m.layers.size(); ++i) {
    if (m.layers[i].kind == LayerKind::kMlpOnly) continue;
    out.layer_specs.push_back(LayerCacheSpec(m, m.layers[i], o, block));
    out.layer_index.push_back(static_cast<int>(i));
  }
  if (out.layer_specs.empty())
    return Status::FailedPrecondition(m.name + " has no layer that keeps a KV cache or state");
  FitStatePages(out, o);
  GOODPUT_RETURN_IF_ERROR(UnifyPageSizes(out));
  GroupLayers(out);
  out.attention_block_size = block;
  for (const auto& s : out.layer_specs) {
    if (!s.is_state()) out.attention_block_size = s.group.block_size;
  }
  return out;
}

KvCapacity ComputeCapacity(const KvLayout& layout, int64_t available_bytes, int64_t max_model_len,
                           int64_t max_num_batched_tokens) {
  return CapacityForBlocks(layout.EngineGroups(), layout.NumBlocks(available_bytes), max_model_len,
                           max_num_batched_tokens);
}

}  // namespace goodput
