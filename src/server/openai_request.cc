#include "server/openai_request.h"

#include <cmath>

#include <boost/json.hpp>
#include <fmt/format.h>

namespace goodput::server {
namespace json = boost::json;
namespace {

ApiError Bad(const std::string& param, const std::string& message) {
  ApiError e;
  e.param = param;
  e.message = message;
  return e;
}

using Parsed = std::variant<GenerationRequest, ApiError>;

std::optional<ApiError> Integer(const json::object& o, const char* key, int64_t lo, int64_t hi, int64_t* out) {
  const json::value* v = o.if_contains(key);
  if (!v || v->is_null()) return std::nullopt;
  if (!v->is_int64() && !v->is_uint64()) return Bad(key, fmt::format("'{}' must be an integer", key));
  const int64_t x = v->is_int64() ? v->as_int64() : static_cast<int64_t>(v->as_uint64());
  if (x < lo || x > hi) return Bad(key, fmt::format("'{}' must be between {} and {}, got {}", key, lo, hi, x));
  *out = x;
  return std::nullopt;
}

std::optional<ApiError> Number(const json::object& o, const char* key, double lo, double hi, double* out) {
  const json::value* v = o.if_contains(key);
  if (!v || v->is_null()) return std::nullopt;
  if (!v->is_number()) return Bad(key, fmt::format("'{}' must be a number", key));
  const double x = v->to_number<double>();
  if (!(x >= lo && x <= hi))
    return Bad(key, fmt::format("'{}' must be between {:g} and {:g}, got {:g}", key, lo, hi, x));
  *out = x;
  return std::nullopt;
}

std::optional<ApiError> Boolean(const json::object& o, const char* key, bool* out) {
  const json::value* v = o.if_contains(key);
  if (!v || v->is_null()) return std::nullopt;
  if (!v->is_bool()) return Bad(key, fmt::format("'{}' must be true or false", key));
  *out = v->as_bool();
  return std::nullopt;
}

std::optional<ApiError> Prompt(const json::value* v, GenerationRequest& r) {
  if (!v) return Bad("prompt", "'prompt' is required");
  if (v->is_string()) {
    r.prompt_text = std::string(v->as_string());
  } else if (v->is_array() && !v->as_array().empty() && v->as_array()[0].is_number()) {
    for (const auto& t : v->as_array()) {
      if (!t.is_int64() || t.as_int64() < 0 || t.as_int64() > INT32_MAX) {
        return Bad("prompt", "a token-id prompt must list non-negative integers");
      }
      r.prompt_ids.push_back(static_cast<int32_t>(t.as_int64()));
    }
  } else {
    return Bad("prompt", "'prompt' must be a string or a list of token ids (one prompt per request)");
  }
  if (r.prompt_text.empty() && r.prompt_ids.empty()) return Bad("prompt", "'prompt' is empty");
  return std::nullopt;
}

// A message's content: a string, or (the OpenAI and vLLM form) a list of
// parts, of which goodput serve takes text parts, joined by newlines as vLLM
// joins them.
std::optional<ApiError> Content(const json::value* c, std::string& out) {
  if (c && c->is_string()) {
    out = std::string(c->as_string());
    return std::nullopt;
  }
  if (!c || !c->is_array()) return Bad("messages", "each message needs a 'content': a string or a list of text parts");
  for (const json::value& part : c->as_array()) {
    const json::object* p = part.if_object();
    const json::value* type = p ? p->if_contains("type") : nullptr;
    const json::value* text = p ? p->if_contains("text") : nullptr;
    if (!type || !type->is_string() || type->as_string() != "text" || !text || !text->is_string()) {
      return Bad("messages",
                 "a content part must be {\"type\": \"text\", \"text\": \"...\"} (goodput serve takes text only)");
    }
    out += (out.empty() ? "" : "\n") + std::string(text->as_string());
  }
  return std::nullopt;
}

std::optional<ApiError> Messages(const json::value* v, GenerationRequest& r) {
  if (!v || !v->is_array() || v->as_array().empty()) return Bad("messages", "'messages' must be a non-empty list");
  for (const auto& m : v->as_array()) {
    const json::object* o = m.if_object();
    if (!o || !o->contains("role") || !o->at("role").is_string()) {
      return Bad("messages", "each message needs a string 'role'");
    }
    ChatMessage msg{std::string(o->at("role").as_string()), ""};
    if (msg.role != "system" && msg.role != "user" && msg.role != "assistant") {
      return Bad("messages", fmt::format("unknown role '{}' (system, user, assistant)", msg.role));
    }
    if (auto e = Content(o->if_contains("content"), msg.content)) return e;
    r.messages.push_back(std::move(msg));
  }
  return std::nullopt;
}

std::optional<ApiError> Stop(const json::value* v, GenerationRequest& r) {
  if (!v || v->is_null()) return std::nullopt;
  if (v->is_string()) {
    r.stop.emplace_back(v->as_string());
    return std::nullopt;
  }
  if (!v->is_array()) return Bad("stop", "'stop' must be a string or a list of strings");
  for (const auto& s : v->as_array()) {
    if (!s.is_string()) return Bad("stop", "'stop' must be a string or a list of strings");
    r.stop.emplace_back(s.as_string());
  }
  return std::nullopt;
}

bool IsZero(const json::value& v) { return v.is_number() && v.to_number<double>() == 0; }
bool IsOne(const json::value& v) { return v.is_number() && v.to_number<double>() == 1; }
bool IsEmpty(const json::value& v) {
  return (v.is_array() && v.as_array().empty()) || (v.is_object() && v.as_object().empty()) ||
         (v.is_string() && v.as_string().empty());
}
bool IsNone(const json::value& v) { return v.is_string() && v.as_string() == "none"; }
bool Never(const json::value&) { return false; }

// Parameters of OpenAI's and vLLM's APIs that goodput serve does not
// implement, each with the value that asks for nothing (null always does).
struct Unimplemented {
  const char* key;
  bool (*is_default)(const json::value&);
  const char* what;
};
constexpr Unimplemented kUnimplemented[] = {
    {"presence_penalty", IsZero, "no penalties"},
    {"frequency_penalty", IsZero, "no penalties"},
    {"repetition_penalty", IsOne, "no penalties"},
    {"min_p", IsZero, "no min-p sampling"},
    {"logit_bias", IsEmpty, "no logit bias"},
    {"stop_token_ids", IsEmpty, "it stops at 'stop' strings and end of sequence"},
    {"suffix", IsEmpty, "no text is inserted"},
    {"tool_choice", IsNone, "no tool calling"},
    {"functions", IsEmpty, "no function calling"},
    {"function_call", IsNone, "no function calling"},
    {"guided_json", Never, "no guided decoding"},
    {"guided_regex", Never, "no guided decoding"},
    {"guided_choice", Never, "no guided decoding"},
    {"guided_grammar", Never, "no guided decoding"},
    {"prompt_logprobs", Never, "no prompt log-probabilities"},
};

// OpenAI parameters goodput serve does not implement: refused by name unless
// they ask for the default, so a client never gets an answer it did not ask for.
std::optional<ApiError> Unsupported(const json::object& o) {
  const auto given = [&](const char* key) -> const json::value* {
    const json::value* v = o.if_contains(key);
    return v && !v->is_null() ? v : nullptr;
  };
  const auto refuse = [](const char* key, const char* what) {
    return Bad(key, fmt::format("'{}' is not supported by goodput serve ({})", key, what));
  };
  if (const json::value* v = given("n"); v && !IsOne(*v)) return refuse("n", "one choice per request");
  if (const json::value* v = given("best_of"); v && !IsOne(*v)) return refuse("best_of", "one choice per request");
  if (const json::value* v = given("echo"); v && !(v->is_bool() && !v->as_bool()))
    return refuse("echo", "the prompt is not echoed");
  if (const json::value* v = given("tools"); v && !(v->is_array() && v->as_array().empty())) {
    return refuse("tools", "no tool calling");
  }
  for (const Unimplemented& u : kUnimplemented) {
    if (const json::value* v = given(u.key); v && !u.is_default(*v)) return refuse(u.key, u.what);
  }
  if (const json::value* v = given("response_format")) {
    const json::value* type = v->is_object() ? v->as_object().if_contains("type") : nullptr;
    if (!(type && type->is_string() && type->as_string() == "text")) {
      return refuse("response_format", "only plain text is generated");
    }
  }
  return std::nullopt;
}

// Log-probabilities as OpenAI asks for them: on /completions "logprobs": N
// (the sampled token's and the N most likely, N <= 20); on chat
// "logprobs": true with "top_logprobs": N.
std::optional<ApiError> Logprobs(const json::object& o, bool chat, SamplingParams& s) {
  int64_t n = -1;
  if (!chat) {
    if (const json::value* v = o.if_contains("logprobs"); v && v->is_bool()) {
      if (v->as_bool()) return Bad("logprobs", "'logprobs' on /completions is a number of top tokens, 0 to 20");
    } else if (auto e = Integer(o, "logprobs", 0, kMaxLogprobs, &n)) {
      return e;
    }
    if (const json::value* v = o.if_contains("top_logprobs"); v && !v->is_null()) {
      return Bad("top_logprobs", "'top_logprobs' is for /chat/completions; on /completions 'logprobs' is the count");
    }
    s.logprobs = static_cast<int>(n);
    return std::nullopt;
  }
  bool wanted = false;
  if (auto e = Boolean(o, "logprobs", &wanted)) return e;
  if (auto e = Integer(o, "top_logprobs", 0, kMaxLogprobs, &n)) return e;
  if (n > 0 && !wanted) return Bad("top_logprobs", "'top_logprobs' needs 'logprobs': true");
  s.logprobs = wanted ? static_cast<int>(std::max<int64_t>(0, n)) : -1;
  return std::nullopt;
}

std::optional<ApiError> Sampling(const json::object& o, bool chat, GenerationRequest& r) {
  SamplingParams& s = r.sampling;
  int64_t max_tokens = 16, min_tokens = 0, top_k = 0, priority = 0, seed = -1;
  // Chat's max_completion_tokens replaces max_tokens, unless it is null.
  const json::value* mct = chat ? o.if_contains("max_completion_tokens") : nullptr;
  const char* max_key = mct && !mct->is_null() ? "max_completion_tokens" : "max_tokens";
  if (auto e = Integer(o, max_key, 1, 1 << 30, &max_tokens)) return e;
  if (auto e = Integer(o, "min_tokens", 0, 1 << 30, &min_tokens)) return e;
  if (min_tokens > max_tokens) return Bad("min_tokens", "'min_tokens' must not exceed 'max_tokens'");
  if (auto e = Number(o, "temperature", 0, 2, &s.temperature)) return e;
  if (auto e = Number(o, "top_p", 1e-9, 1, &s.top_p)) return e;
  if (auto e = Integer(o, "top_k", -1, 1 << 30, &top_k)) return e;
  if (auto e = Integer(o, "seed", 0, INT64_MAX, &seed)) return e;
  if (auto e = Integer(o, "priority", -(1 << 30), 1 << 30, &priority)) return e;
  if (auto e = Boolean(o, "ignore_eos", &s.ignore_eos)) return e;
  if (auto e = Logprobs(o, chat, s)) return e;
  s.max_tokens = max_tokens;
  s.min_tokens = min_tokens;
  s.top_k = static_cast<int>(std::max<int64_t>(0, top_k));
  if (seed >= 0) r.seed = static_cast<uint64_t>(seed);
  r.priority = static_cast<int>(priority);
  return std::nullopt;
}

}  // namespace

std::string ApiError::ToJson() const {
  json::object err{{"message", message},
                   {"type", type},
                   {"param", param.empty() ? json::value(nullptr) : json::value(param)},
                   {"code", code.empty() ? json::value(nullptr) : json::value(code)}};
  return json::serialize(json::object{{"error", err}});
}

std::variant<GenerationRequest, ApiError> ParseGenerationRequest(const std::string& body, bool chat,
                                                                 const std::string& class_header) {
  boost::system::error_code ec;
  json::value doc = json::parse(body, ec);
  if (ec) return Bad("", fmt::format("the body is not valid JSON ({})", ec.message()));
  const json::object* o = doc.if_object();
  if (!o) return Bad("", "the body must be a JSON object");
  GenerationRequest r;
  r.chat = chat;
  const json::value* model = o->if_contains("model");
  if (!model || !model->is_string()) return Bad("model", "'model' must be a string");
  r.model = std::string(model->as_string());
  if (auto e = chat ? Messages(o->if_contains("messages"), r) : Prompt(o->if_contains("prompt"), r)) return *e;
  if (auto e = Unsupported(*o)) return *e;
  if (auto e = Sampling(*o, chat, r)) return *e;
  if (auto e = Stop(o->if_contains("stop"), r)) return *e;
  if (auto e = Boolean(*o, "stream", &r.stream)) return *e;
  if (const json::value* so = o->if_contains("stream_options"); so && !so->is_null()) {
    if (!so->is_object()) return Bad("stream_options", "'stream_options' must be an object");
    if (auto e = Boolean(so->as_object(), "include_usage", &r.include_usage)) return *e;
    if (auto e = Boolean(so->as_object(), "continuous_usage_stats", &r.continuous_usage)) return *e;
  }
  if (const json::value* c = o->if_contains("class"); c && !c->is_null()) {
    if (!c->is_string()) return Bad("class", "'class' must be a string");
    r.request_class = std::string(c->as_string());
  }
  if (!class_header.empty()) r.request_class = class_header;
  return r;
}

}  // namespace goodput::server
