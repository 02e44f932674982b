#include "engine/kv_groups.h"

#include <algorithm>

#include <fmt/format.h>

#include "core/units.h"

namespace goodput {
namespace {

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

}  // namespace

int64_t KvGroupSpec::PeakBlocks(int64_t tokens, int64_t max_chunk) const {
  switch (type) {
    case Type::kState: return 1;
    case Type::kSlidingWindow:
      return std::min(CeilDiv(tokens, block_size), CeilDiv(sliding_window - 1 + max_chunk, block_size) + 1);
    case Type::kFull: break;
  }
  return CeilDiv(tokens, block_size);
}

int64_t KvGroupSpec::ReservedBlocks(int64_t tokens, int64_t max_num_batched_tokens) const {
  if (type != Type::kSlidingWindow) return PeakBlocks(tokens, max_num_batched_tokens);
  return CeilDiv(std::min(sliding_window - 1 + max_num_batched_tokens, tokens), block_size) + 1;
}

int64_t PeakBlocks(const std::vector<KvGroupSpec>& groups, int64_t tokens, int64_t max_chunk) {
  int64_t blocks = 0;
  for (const auto& g : groups) blocks += g.PeakBlocks(tokens, max_chunk);
  return blocks;
}

int64_t ReservedBlocks(const std::vector<KvGroupSpec>& groups, int64_t tokens, int64_t max_num_batched_tokens) {
  int64_t blocks = 0;
  for (const auto& g : groups) blocks += g.ReservedBlocks(tokens, max_num_batched_tokens);
  return blocks;
}

KvCapacity CapacityForBlocks(const std::vector<KvGroupSpec>& groups, int64_t num_blocks, int64_t max_model_len,
                             int64_t max_num_batched_tokens) {
  KvCapacity c;
  c.num_blocks = num_blocks;
  const int64_t per_request = ReservedBlocks(groups, max_model_len, max_num_batched_tokens);
  c.max_concurrency = per_request > 0 ? static_cast<double>(c.num_blocks) / static_cast<double>(per_request) : 0;
  // The state groups' block size is max_model_len in vLLM, so the minimum is
  // the attention block size whenever attention layers exist.
  int64_t min_block = max_model_len;
  for (const auto& g : groups) {
    if (g.type != KvGroupSpec::Type::kState) min_block = std::min(min_block, g.block_size);
  }
  const auto n_groups = static_cast<int64_t>(groups.size());
  c.tokens_per_group = n_groups > 0 ? c.num_blocks / n_groups * min_block : 0;
  c.tokens_concurrency = static_cast<int64_t>(c.max_concurrency * static_cast<double>(max_model_len));
  return c;
}

std::string KvCapacityLogLines(const KvCapacity& c, int64_t max_model_len) {
  return fmt::format("GPU KV cache size: {} tokens\n", FormatCount(c.tokens_concurrency)) +
         fmt::format("Maximum concurrency for {} tokens per request: {:.2f}x\n", FormatCount(max_model_len),
                     c.max_concurrency);
}

}  // namespace goodput
