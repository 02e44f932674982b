// Conversation datasets in ShareGPT's layout, read as vLLM's serving
// benchmark samples them (`--dataset-name sharegpt`): a JSON array of
//   {"conversations": [{"from": "human", "value": "..."},
//                      {"from": "gpt", "value": "..."}, ...], ...}
// where each conversation's first turn is a prompt and its second the answer;
// conversations of fewer than two turns are skipped. Other fields are ignored.
//
// The text is not tokenized (goodput carries no model's tokenizer): a turn's
// tokens are its characters (Unicode code points) over `chars_per_token`.
// The file is read as a stream, so a dataset of any size costs memory only
// for its lengths.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"
#include "workload/trace.h"

namespace goodput {

struct ConversationOptions {
  // OpenAI's rule of thumb for English text ("one token is about 4
  // characters"); a model's own tokenizer differs by language and content.
  double chars_per_token = 4;
  // vLLM's benchmark filter (is_valid_sequence): both lengths at least 4
  // tokens, the prompt at most 1,024 and prompt + answer at most 2,048.
  bool vllm_bench_filter = false;
};

struct ConversationLengths {
  std::vector<TraceRow> rows;  // one per conversation kept, in file order; t = 0 (no arrival times)
  int64_t conversations = 0;   // in the file
  int64_t too_short = 0;       // fewer than two turns
  int64_t filtered = 0;        // left out by vLLM's benchmark filter
};

// True when the file's first non-blank byte opens a JSON array (a
// conversation dataset rather than a trace).
bool IsJsonArrayFile(const std::string& path);

// Reads a conversation dataset. Errors name the file and, for malformed JSON,
// the byte offset; a file with no usable conversation is an error.
Result<ConversationLengths> ReadConversations(const std::string& path, const ConversationOptions& options = {});

}  // namespace goodput
