// One generation request without the socket: the request body goes in and the
// engine Request to submit comes out; each engine output goes in and the SSE
// events to write come out; at the end, the usage chunk and [DONE], or the one
// JSON response. The HTTP transport (http_server.cc) only moves these strings
// between the connection and the engine, so every byte of the API is testable
// here without a network.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <variant>

#include "engine/engine_service.h"
#include "server/generation.h"
#include "server/openai_request.h"

namespace goodput::server {

class GenerationSession {
 public:
  struct Arrival {
    std::string body;          // the request's JSON
    bool chat = false;         // /v1/chat/completions (else /v1/completions)
    std::string class_header;  // x-goodput-class ("" when absent)
    RequestId id = 0;
    uint64_t seed = 0;         // used when the request names none
    double now = 0;            // the engine clock at arrival
    double created = 0;        // unix seconds, for the "created" field
  };

  // Parses and validates the request (unknown model: 404; malformed body,
  // bad token ids, a prompt longer than the model: 400).
  static std::variant<GenerationSession, ApiError> Open(const ServedModel& model, const Arrival& arrival);

  // The engine request to submit; call once.
  Request TakeEngineRequest();
  bool stream() const { return g_.stream; }
  RequestId id() const { return id_; }
  int64_t max_tokens() const { return max_tokens_; }

  struct Update {
    std::string events;     // SSE text to write now (streams only; may be empty)
    bool abort = false;     // a stop string ended the text: abort the engine request
    bool finished = false;  // the engine's last output for this request
  };
  Update OnOutput(const RequestOutput& output);

  // After the finished output, the rest of the response: for a stream the
  // usage chunk (when asked for) and "data: [DONE]"; otherwise the JSON body.
  // A request the engine rejected (nothing was streamed) is a 400.
  std::variant<std::string, ApiError> Finish() const;

  // TTFT, TPOT (negative with fewer than 2 tokens) and E2E for /metrics;
  // empty when no token came.
  struct Latencies {
    double ttft = 0, tpot = -1, e2e = 0;
  };
  std::optional<Latencies> latencies() const;

 private:
  GenerationSession(const ServedModel& model, GenerationRequest g, const Arrival& a, std::vector<int32_t> prompt);
  std::string ChunkEvent(const std::string& text, const char* finish, const RequestOutput* tokens);
  bool wants_logprobs() const { return g_.sampling.logprobs >= 0; }

  const ServedModel* model_;
  GenerationRequest g_;
  RequestId id_;
  std::string response_id_;
  double created_, t0_;
  uint64_t seed_;
  std::vector<int32_t> prompt_;
  int64_t prompt_tokens_ = 0;
  int64_t max_tokens_ = 0;
  TextStream text_;
  std::string all_text_;
  int64_t n_out_ = 0;
  std::vector<int32_t> out_ids_;          // with logprobs: every generated token, for the whole response
  std::vector<TokenLogprob> logprobs_;
  int64_t text_offset_ = 0;               // /completions stream: where the next chunk's first token starts
  double t_first_ = -1, t_last_ = -1;
  FinishReason reason_ = FinishReason::kNone;
  bool first_chunk_ = true;
};

}  // namespace goodput::server
