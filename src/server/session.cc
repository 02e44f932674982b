#include "server/session.h"

#include <algorithm>

#include <boost/json.hpp>
#include <fmt/format.h>

#include "core/request_record.h"
#include "server/logprobs_json.h"

namespace goodput::server {
namespace json = boost::json;

namespace {

std::string SseEvent(const std::string& data) { return "data: " + data + "\n\n"; }

json::object Usage(int64_t prompt, int64_t completion) {
  return json::object{
      {"prompt_tokens", prompt}, {"completion_tokens", completion}, {"total_tokens", prompt + completion}};
}

const char* FinishName(FinishReason r, bool stopped) {
  if (stopped || r == FinishReason::kStop) return "stop";
  return r == FinishReason::kAborted ? "abort" : "length";
}

const char* ObjectName(bool chat, bool chunk) {
  if (chat) return chunk ? "chat.completion.chunk" : "chat.completion";
  return "text_completion";
}

}  // namespace

std::variant<GenerationSession, ApiError> GenerationSession::Open(const ServedModel& model, const Arrival& a) {
  auto parsed = ParseGenerationRequest(a.body, a.chat, a.class_header);
  if (auto* e = std::get_if<ApiError>(&parsed)) return *e;
  GenerationRequest& g = std::get<GenerationRequest>(parsed);
  if (g.model != model.name) {
    return ApiError{404, fmt::format("The model `{}` does not exist.", g.model), "NotFoundError", "model",
                    "model_not_found"};
  }
  auto prompt = PromptIds(g, model);
  if (auto* e = std::get_if<ApiError>(&prompt)) return *e;
  return GenerationSession(model, std::move(g), a, std::get<std::vector<int32_t>>(std::move(prompt)));
}

GenerationSession::GenerationSession(const ServedModel& model, GenerationRequest g, const Arrival& a,
                                     std::vector<int32_t> prompt)
    : model_(&model),
      g_(std::move(g)),
      id_(a.id),
      response_id_(fmt::format("{}-{}", a.chat ? "chatcmpl" : "cmpl", a.id)),
      created_(a.created),
      t0_(a.now),
      seed_(g_.seed ? *g_.seed : a.seed),
      prompt_(std::move(prompt)),
      text_(*model.tokenizer, g_.stop) {
  prompt_tokens_ = static_cast<int64_t>(prompt_.size());
  max_tokens_ = std::min(g_.sampling.max_tokens, model.max_model_len - static_cast<int64_t>(prompt_.size()));
}

Request GenerationSession::TakeEngineRequest() {
  Request r;
  r.id = id_;
  r.token_ids = std::move(prompt_);
  r.num_prompt_tokens = static_cast<int64_t>(r.token_ids.size());
  r.sampling = g_.sampling;
  r.sampling.max_tokens = max_tokens_;
  r.sampling.seed = seed_;
  r.priority = g_.priority;
  const auto& offline = model_->offline_classes;
  r.offline = std::find(offline.begin(), offline.end(), g_.request_class) != offline.end();
  return r;
}

// `tokens`: the output whose tokens the chunk carries (their log-probabilities,
// when asked for); nullptr for the closing chunk.
std::string GenerationSession::ChunkEvent(const std::string& text, const char* finish, const RequestOutput* tokens) {
  json::object choice{{"index", 0}, {"finish_reason", finish ? json::value(finish) : json::value(nullptr)}};
  json::value logprobs = nullptr;
  if (wants_logprobs() && tokens) {
    logprobs = g_.chat ? ChatLogprobs(*model_->tokenizer, tokens->new_token_ids, tokens->new_logprobs)
                       : CompletionLogprobs(*model_->tokenizer, tokens->new_token_ids, tokens->new_logprobs,
                                            text_offset_);
  }
  if (g_.chat) {
    json::object delta;
    if (first_chunk_) delta["role"] = "assistant";
    if (!text.empty() || !finish) delta["content"] = text;
    choice["delta"] = delta;
    if (wants_logprobs()) choice["logprobs"] = logprobs;
  } else {
    choice["text"] = text;
    choice["logprobs"] = logprobs;
  }
  first_chunk_ = false;
  json::object chunk{{"id", response_id_},
                     {"object", ObjectName(g_.chat, true)},
                     {"created", static_cast<int64_t>(created_)},
                     {"model", model_->name},
                     {"choices", json::array{choice}}};
  // vLLM's continuous_usage_stats: the counts so far, so a client knows how
  // many tokens each chunk carries.
  if (g_.include_usage && g_.continuous_usage) chunk["usage"] = Usage(prompt_tokens_, n_out_);
  return SseEvent(json::serialize(chunk));
}

GenerationSession::Update GenerationSession::OnOutput(const RequestOutput& o) {
  Update u;
  if (o.num_new_tokens > 0) {
    n_out_ += o.num_new_tokens;
    if (t_first_ < 0) t_first_ = o.time;
    t_last_ = o.time;
  }
  if (wants_logprobs() && !g_.stream) {
    out_ids_.insert(out_ids_.end(), o.new_token_ids.begin(), o.new_token_ids.end());
    logprobs_.insert(logprobs_.end(), o.new_logprobs.begin(), o.new_logprobs.end());
  }
  std::string delta = text_.Append(o.new_token_ids);
  u.abort = text_.stopped() && !o.finished;
  if (o.finished) {
    reason_ = o.reason;
    delta += text_.Finish();
    u.finished = true;
  }
  all_text_ += delta;
  if (!g_.stream || reason_ == FinishReason::kRejected) return u;
  // A step's tokens go out even when their text is held back (part of a UTF-8
  // character, a possible stop string) or empty (tokens with no bytes), as
  // vLLM streams them: the chunk's usage tells the client they exist.
  if (!delta.empty() || o.num_new_tokens > 0) u.events += ChunkEvent(delta, nullptr, &o);
  if (o.finished) u.events += ChunkEvent("", FinishName(reason_, text_.stopped()), nullptr);
  return u;
}

std::variant<std::string, ApiError> GenerationSession::Finish() const {
  if (reason_ == FinishReason::kRejected) {
    return ApiError{400, "the request needs more KV cache than this server has", "invalid_request_error", "", ""};
  }
  const json::object usage = Usage(prompt_tokens_, n_out_);
  const auto created = static_cast<int64_t>(created_);
  if (g_.stream) {
    std::string out;
    if (g_.include_usage) {
      out += SseEvent(json::serialize(json::object{{"id", response_id_},
                                                   {"object", ObjectName(g_.chat, true)},
                                                   {"created", created},
                                                   {"model", model_->name},
                                                   {"choices", json::array{}},
                                                   {"usage", usage}}));
    }
    return out + SseEvent("[DONE]");
  }
  json::object choice{{"index", 0}, {"finish_reason", FinishName(reason_, text_.stopped())}};
  int64_t offset = 0;
  if (g_.chat) {
    choice["message"] = json::object{{"role", "assistant"}, {"content", all_text_}};
    if (wants_logprobs()) choice["logprobs"] = ChatLogprobs(*model_->tokenizer, out_ids_, logprobs_);
  } else {
    choice["text"] = all_text_;
    choice["logprobs"] = wants_logprobs() ? CompletionLogprobs(*model_->tokenizer, out_ids_, logprobs_, offset)
                                          : json::value(nullptr);
  }
  return json::serialize(json::object{{"id", response_id_}, {"object", ObjectName(g_.chat, false)},
                                      {"created", created}, {"model", model_->name},
                                      {"choices", json::array{choice}}, {"usage", usage}});
}

std::optional<GenerationSession::Latencies> GenerationSession::latencies() const {
  if (t_first_ < 0) return std::nullopt;
  // Every measurement's definitions (core/request_record.h), from the server's
  // side: the request arrives when it reaches the server.
  RequestRecord r;
  r.t_arrival = r.t_sent = t0_;
  r.t_first = t_first_;
  r.t_last = t_last_;
  r.n_out = n_out_;
  return Latencies{*Ttft(r), Tpot(r).value_or(-1), *E2e(r)};
}

}  // namespace goodput::server
