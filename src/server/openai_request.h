// Parsing and validating OpenAI-style request bodies (/v1/completions and
// /v1/chat/completions) into engine terms, with OpenAI-style errors: the
// HTTP status, a message naming the parameter, its type and param.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "engine/request.h"

namespace goodput::server {

struct ApiError {
  int http_status = 400;
  std::string message;
  std::string type = "invalid_request_error";
  std::string param;  // the offending field, when there is one
  std::string code;   // e.g. "model_not_found"
  std::string ToJson() const;
};

struct ChatMessage {
  std::string role;  // system | user | assistant
  std::string content;
};

struct GenerationRequest {
  std::string model;
  bool chat = false;
  std::string prompt_text;            // completions with a text prompt
  std::vector<int32_t> prompt_ids;    // completions with token ids
  std::vector<ChatMessage> messages;  // chat
  SamplingParams sampling;            // max_tokens, min_tokens, temperature, top_p, top_k, seed, ignore_eos
  std::optional<uint64_t> seed;       // as given (the server picks one when absent)
  std::vector<std::string> stop;
  bool stream = false;
  bool include_usage = false;         // stream_options.include_usage
  bool continuous_usage = false;      // stream_options.continuous_usage_stats (vLLM's): usage in every chunk
  int priority = 0;
  std::string request_class;          // "class" field or x-goodput-class header; "" = default
};

// Parses a body; `chat` selects the chat schema. `class_header` is the
// x-goodput-class header ("" when absent); it wins over a body "class".
std::variant<GenerationRequest, ApiError> ParseGenerationRequest(const std::string& body, bool chat,
                                                                 const std::string& class_header);

}  // namespace goodput::server
