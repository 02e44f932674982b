// The answers an OpenAI-compatible endpoint gives to fixed prompts, asked
// greedily (temperature 0, a fixed seed) with the chosen tokens'
// log-probabilities: what two engines are compared by (tune/output_diff.h),
// as the source document compared its answers after switching the KV cache
// format.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "client/endpoint.h"
#include "core/status.h"
#include "tune/output_diff.h"
#include "workload/workload.h"

namespace goodput::client {

struct AnswerPrompt {
  std::string label;               // "question 1", "workload request 3"
  std::string text;                // a text prompt, or
  std::vector<int32_t> token_ids;  // a token-id prompt (as the load generator sends the workload's)
};

// Five fixed questions (a fact, an explanation, code, a translation, a list).
std::vector<AnswerPrompt> FixedQuestions();

// The workload's first `n` requests' prompts, as a run of it sends them.
std::vector<AnswerPrompt> WorkloadPrompts(const Workload& w, int n);

struct AnswerOptions {
  Endpoint endpoint;
  std::string model;
  bool chat = false;    // /chat/completions (token-id prompts as text) instead of /completions
  int max_tokens = 32;  // per answer
  uint64_t seed = 1234;
  double timeout_s = 120;  // per request
  bool insecure_tls = false;
  std::function<bool()> stop;  // checked before each prompt: true ends with "interrupted"; may be empty
};

// Each prompt's answer, in order. A server that refuses log-probabilities is
// asked again without them, and its answers are then compared by character
// (Answer::logprobs empty). Errors: stop, no answer, a status other than 200 (the
// server's message), or a body that is not an OpenAI completion.
Result<std::vector<Answer>> CollectAnswers(const AnswerOptions& options, const std::vector<AnswerPrompt>& prompts);

}  // namespace goodput::client
