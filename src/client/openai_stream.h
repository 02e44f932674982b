// What the pieces of an OpenAI-compatible response mean to a measurement:
// which SSE chunks carry generated tokens (content or reasoning; never an
// empty role-only chunk or a finish-only chunk), the usage the server
// reports, and errors sent in-stream.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace goodput::client {

struct StreamChunk {
  int32_t tokens = 0;                      // generated tokens this chunk carries (1 per non-empty piece)
  bool done = false;                       // the `[DONE]` sentinel
  std::optional<int64_t> prompt_tokens;    // from `usage`, when the chunk has it
  std::optional<int64_t> completion_tokens;
  std::optional<std::string> finish_reason;
};

// The most tokens a usage count may give (2^24, above any model's context):
// a larger or negative count is refused, as the timings would otherwise
// spread that many tokens over the chunks.
constexpr int64_t kMaxUsageTokens = int64_t{1} << 24;

// Parses one SSE `data:` payload of a completions or chat-completions stream.
// An `error` object in the payload, data that is not a JSON object, or a
// usage count outside 0..kMaxUsageTokens is an error whose message says what
// arrived.
Result<StreamChunk> ParseStreamChunk(std::string_view data);

// The body of a request for the prompt `prompt_ids` (completions: the ids
// themselves; chat: one byte-ish word per id, since chat has no id form),
// generating exactly `max_tokens` when `fixed_length` (ignore_eos and
// min_tokens; some servers lack them, hence the switch).
struct GenerationBody {
  std::string model;
  bool chat = false;
  std::vector<int32_t> prompt_ids;  // workload/arrivals.h PromptTokenIds: shared prefixes stay shared
  int64_t max_tokens = 0;
  bool fixed_length = true;
  int priority = 0;   // sent when non-zero (vLLM refuses priorities unless its policy is priority)
};
std::string MakeRequestBody(const GenerationBody& b);

// Chat takes text only: a token-id prompt as " a" words, one token in most
// BPE vocabularies (two in a byte tokenizer), so its length is approximate.
std::string ChatPromptText(const std::vector<int32_t>& prompt_ids);

}  // namespace goodput::client
