#include "server/generation.h"

#include <algorithm>

#include <fmt/format.h>

namespace goodput::server {

std::string ApplyChatTemplate(const std::vector<ChatMessage>& messages) {
  std::string s;
  for (const auto& m : messages) s += fmt::format("<|{}|>\n{}\n", m.role, m.content);
  return s + "<|assistant|>\n";
}

std::variant<std::vector<int32_t>, ApiError> PromptIds(const GenerationRequest& r, const ServedModel& m) {
  std::vector<int32_t> ids;
  if (!r.prompt_ids.empty()) {
    for (int32_t id : r.prompt_ids) {
      if (id >= m.tokenizer->vocab_size()) {
        ApiError e;
        e.param = "prompt";
        e.message = fmt::format("token id {} is outside the vocabulary of {} tokens", id, m.tokenizer->vocab_size());
        return e;
      }
    }
    ids = r.prompt_ids;
  } else {
    if (m.tokenizer->bos_id() >= 0) ids.push_back(m.tokenizer->bos_id());
    const auto text = m.tokenizer->Encode(r.chat ? ApplyChatTemplate(r.messages) : r.prompt_text);
    ids.insert(ids.end(), text.begin(), text.end());
  }
  if (static_cast<int64_t>(ids.size()) >= m.max_model_len) {
    ApiError e;
    e.param = r.chat ? "messages" : "prompt";
    e.message = fmt::format(
        "This model's maximum context length is {} tokens. However, your request has {} input tokens. Please "
        "reduce the length of the input messages.",
        m.max_model_len, ids.size());
    return e;
  }
  return ids;
}

std::string SanitizeUtf8(const std::string& s) {
  std::string out;
  size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    size_t len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    bool ok = len > 0 && i + len <= s.size();
    for (size_t k = 1; ok && k < len; ++k) ok = (static_cast<unsigned char>(s[i + k]) & 0xc0) == 0x80;
    if (ok && len > 1) {  // reject overlong encodings and surrogates
      const auto c1 = static_cast<unsigned char>(s[i + 1]);
      ok = !(c == 0xc0 || c == 0xc1 || (c == 0xe0 && c1 < 0xa0) || (c == 0xed && c1 >= 0xa0) ||
             (c == 0xf0 && c1 < 0x90) || c > 0xf4 || (c == 0xf4 && c1 >= 0x90));
    }
    if (ok) {
      out.append(s, i, len);
      i += len;
    } else {
      out += "\xef\xbf\xbd";
      ++i;
    }
  }
  return out;
}

TextStream::TextStream(const Tokenizer& tokenizer, std::vector<std::string> stop)
    : tokenizer_(tokenizer), stop_(std::move(stop)) {
  stop_.erase(std::remove(stop_.begin(), stop_.end(), std::string()), stop_.end());
}

std::string TextStream::Append(const std::vector<int32_t>& ids) {
  if (stopped_) return "";
  ids_.insert(ids_.end(), ids.begin(), ids.end());
  std::string text = tokenizer_.Decode(ids_);
  for (const auto& s : stop_) {
    const size_t at = text.find(s, emitted_ > s.size() ? emitted_ - s.size() : 0);
    if (at != std::string::npos) {
      stopped_ = true;
      text.resize(at);
    }
  }
  size_t ready = stopped_ ? text.size() : CompleteUtf8Prefix(text);
  if (!stopped_) {  // hold back a tail that could still become a stop string
    for (const auto& s : stop_) {
      for (size_t k = std::min(s.size() - 1, ready); k > 0; --k) {
        if (text.compare(ready - k, k, s, 0, k) == 0) {
          ready = std::min(ready, text.size() - k);
          break;
        }
      }
    }
  }
  if (ready <= emitted_) return "";
  std::string out = text.substr(emitted_, ready - emitted_);
  emitted_ = ready;
  return SanitizeUtf8(out);
}

std::string TextStream::Finish() {
  if (stopped_) return "";
  const std::string text = tokenizer_.Decode(ids_);
  std::string out = text.substr(std::min(emitted_, text.size()));
  emitted_ = text.size();
  const size_t complete = CompleteUtf8Prefix(out);
  if (complete < out.size()) out = out.substr(0, complete) + "\xef\xbf\xbd";
  return SanitizeUtf8(out);
}

}  // namespace goodput::server
