#include "client/openai_stream.h"

#include <fmt/format.h>

#include <boost/json.hpp>
#include <utility>

namespace goodput::client {
namespace json = boost::json;
namespace {

// Non-empty string field `key` of `o`.
bool HasText(const json::object& o, std::string_view key) {
  const json::value* v = o.if_contains(key);
  return v && v->is_string() && !v->as_string().empty();
}

int32_t ChoiceTokens(const json::object& choice) {
  if (HasText(choice, "text")) return 1;  // completions
  if (const json::value* d = choice.if_contains("delta"); d && d->is_object()) {
    const json::object& delta = d->as_object();
    if (HasText(delta, "content") || HasText(delta, "reasoning_content") || HasText(delta, "reasoning")) return 1;
  }
  return 0;
}

std::optional<int64_t> IntField(const json::object& o, std::string_view key) {
  const json::value* v = o.if_contains(key);
  if (!v) return std::nullopt;
  if (v->is_int64()) return v->as_int64();
  if (v->is_uint64()) return static_cast<int64_t>(v->as_uint64());
  return std::nullopt;
}

}  // namespace

Result<StreamChunk> ParseStreamChunk(std::string_view data) {
  StreamChunk c;
  if (data == "[DONE]") {
    c.done = true;
    return c;
  }
  boost::system::error_code ec;
  json::value v = json::parse(data, ec);
  if (ec || !v.is_object()) {
    return Status::InvalidArgument("malformed SSE data: '" + std::string(data.substr(0, 80)) + "'");
  }
  const json::object& o = v.as_object();
  if (const json::value* err = o.if_contains("error")) {
    const json::value* msg = err->is_object() ? err->as_object().if_contains("message") : nullptr;
    return Status::FailedPrecondition(
        "in-stream error: " + (msg && msg->is_string() ? std::string(msg->as_string()) : json::serialize(*err)));
  }
  if (const json::value* choices = o.if_contains("choices"); choices && choices->is_array()) {
    for (const json::value& ch : choices->as_array()) {
      if (!ch.is_object()) continue;
      c.tokens += ChoiceTokens(ch.as_object());
      if (const json::value* f = ch.as_object().if_contains("finish_reason"); f && f->is_string()) {
        c.finish_reason = std::string(f->as_string());
      }
    }
  }
  if (const json::value* u = o.if_contains("usage"); u && u->is_object()) {
    c.prompt_tokens = IntField(u->as_object(), "prompt_tokens");
    c.completion_tokens = IntField(u->as_object(), "completion_tokens");
    for (auto [key, count] :
         {std::pair{"prompt_tokens", c.prompt_tokens}, {"completion_tokens", c.completion_tokens}}) {
      if (count && (*count < 0 || *count > kMaxUsageTokens)) {
        return Status::InvalidArgument(
            fmt::format("usage.{} {} is not a token count (0 to {})", key, *count, kMaxUsageTokens));
      }
    }
  }
  return c;
}

std::string ChatPromptText(const std::vector<int32_t>& prompt_ids) {
  std::string text;
  for (int32_t id : prompt_ids) {
    text += ' ';
    text += static_cast<char>('a' + id % 26);
  }
  return text;
}

std::string MakeRequestBody(const GenerationBody& b) {
  json::object o;
  o["model"] = b.model;
  o["max_tokens"] = b.max_tokens;
  o["stream"] = true;
  // continuous_usage_stats (vLLM, SGLang): usage on every chunk tells how
  // many tokens each chunk carries; servers without it ignore the field.
  o["stream_options"] = json::object{{"include_usage", true}, {"continuous_usage_stats", true}};
  if (b.priority != 0) o["priority"] = b.priority;
  if (b.fixed_length) {
    o["ignore_eos"] = true;
    o["min_tokens"] = b.max_tokens;
  }
  if (b.chat) {
    // The server's usage gives the prompt's real length.
    o["messages"] = json::array{json::object{{"role", "user"}, {"content", ChatPromptText(b.prompt_ids)}}};
  } else {
    json::array ids;
    for (int32_t id : b.prompt_ids) ids.push_back(id);
    o["prompt"] = std::move(ids);
  }
  return json::serialize(o);
}

}  // namespace goodput::client
