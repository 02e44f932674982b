#include "server/logprobs_json.h"

#include <cmath>

#include <boost/json.hpp>

#include "server/generation.h"

namespace goodput::server {
namespace json = boost::json;
namespace {

double Finite(float lp) { return std::isfinite(lp) ? static_cast<double>(lp) : -9999.0; }

std::string TokenText(const Tokenizer& t, int32_t id) { return SanitizeUtf8(t.Decode({id})); }

json::array Bytes(const Tokenizer& t, int32_t id) {
  json::array out;
  for (unsigned char c : t.Decode({id})) out.push_back(static_cast<int64_t>(c));
  return out;
}

json::object ChatEntry(const Tokenizer& t, int32_t id, float lp) {
  return json::object{{"token", TokenText(t, id)}, {"logprob", Finite(lp)}, {"bytes", Bytes(t, id)}};
}

}  // namespace

json::value CompletionLogprobs(const Tokenizer& t, const std::vector<int32_t>& ids,
                               const std::vector<TokenLogprob>& logprobs, int64_t& text_offset) {
  json::array tokens, token_logprobs, top_logprobs, offsets;
  for (size_t i = 0; i < ids.size() && i < logprobs.size(); ++i) {
    const std::string text = TokenText(t, ids[i]);
    tokens.push_back(json::value(text));
    token_logprobs.push_back(Finite(logprobs[i].logprob));
    // vLLM's: the sampled token beside the most likely.
    json::object top{{text, Finite(logprobs[i].logprob)}};
    for (const auto& [id, lp] : logprobs[i].top) top[TokenText(t, id)] = Finite(lp);
    top_logprobs.push_back(top);
    offsets.push_back(text_offset);
    text_offset += static_cast<int64_t>(text.size());
  }
  return json::object{
      {"tokens", tokens}, {"token_logprobs", token_logprobs}, {"top_logprobs", top_logprobs}, {"text_offset", offsets}};
}

json::value ChatLogprobs(const Tokenizer& t, const std::vector<int32_t>& ids,
                         const std::vector<TokenLogprob>& logprobs) {
  json::array content;
  for (size_t i = 0; i < ids.size() && i < logprobs.size(); ++i) {
    json::object entry = ChatEntry(t, ids[i], logprobs[i].logprob);
    json::array top;
    for (const auto& [id, lp] : logprobs[i].top) top.push_back(ChatEntry(t, id, lp));
    entry["top_logprobs"] = top;
    content.push_back(entry);
  }
  return json::object{{"content", content}};
}

}  // namespace goodput::server
