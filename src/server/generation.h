// From an API request to engine tokens and back: prompt token ids (text via
// the tokenizer, token ids checked, chat through a simple template), and the
// generated text, emitted incrementally with stop strings and incomplete
// UTF-8 held back.
#pragma once

#include <string>
#include <variant>
#include <vector>

#include "model/tokenizer.h"
#include "server/openai_request.h"

namespace goodput::server {

struct ServedModel {
  std::string name;
  int64_t max_model_len = 0;
  const Tokenizer* tokenizer = nullptr;
  std::vector<std::string> offline_classes = {"offline"};
};

// The built-in models' chat template: "<|role|>\ncontent\n" per message, then
// "<|assistant|>\n" for the answer.
std::string ApplyChatTemplate(const std::vector<ChatMessage>& messages);

// The prompt as token ids (BOS first for text), or a 400 naming the problem
// (an id outside the vocabulary, a prompt that leaves no room to generate).
std::variant<std::vector<int32_t>, ApiError> PromptIds(const GenerationRequest& r, const ServedModel& m);

// `s` with every invalid UTF-8 sequence replaced by U+FFFD (JSON strings
// must be valid UTF-8; a model may emit any bytes).
std::string SanitizeUtf8(const std::string& s);

class TextStream {
 public:
  TextStream(const Tokenizer& tokenizer, std::vector<std::string> stop);

  // Adds generated tokens; returns the text that can be shown now. Once a
  // stop string appears, everything from it on is dropped and stopped() is true.
  std::string Append(const std::vector<int32_t>& ids);
  // What is left at the end of the generation (bytes of an incomplete UTF-8
  // character become U+FFFD).
  std::string Finish();
  bool stopped() const { return stopped_; }

 private:
  const Tokenizer& tokenizer_;
  std::vector<std::string> stop_;
  std::vector<int32_t> ids_;
  size_t emitted_ = 0;  // bytes of the decoded text already returned
  bool stopped_ = false;
};

}  // namespace goodput::server
