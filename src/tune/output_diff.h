// Whether a setting changes what the model answers: the same prompts, asked
// greedily with a fixed seed of two engines (a baseline and a changed
// setting), compared token by token and, where the server returns them, by
// the log-probabilities of the chosen tokens. After the first token where
// two answers part, what follows answers a different text, so agreement
// counts the tokens before it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <boost/json/value.hpp>

namespace goodput {

// One answer: its tokens (as the server names them: token ids or token
// strings) and, when returned, each token's log-probability.
struct Answer {
  std::string prompt_label;  // "question 1", "workload request 3"
  std::vector<std::string> tokens;
  std::vector<double> logprobs;  // empty when the server returned none
  std::string text;
};

struct AnswerDiff {
  std::string prompt_label;
  int64_t tokens = 0;                            // the longer answer's length
  int64_t agreeing = 0;                          // tokens before the first that differs
  std::optional<int64_t> first_divergence;       // position of the first differing token; none: identical
  std::optional<double> mean_abs_logprob_delta;  // over the agreeing tokens, when both have log-probabilities
};

// When two engines' answers count as different.
struct OutputThresholds {
  double min_token_agreement = 0.9;         // agreeing tokens / tokens, over every prompt
  double max_mean_abs_logprob_delta = 0.1;  // nats, over every agreeing token
};

struct OutputComparison {
  std::vector<AnswerDiff> answers;
  int64_t prompts = 0, identical = 0;            // prompts answered token for token the same
  double token_agreement = 1;                    // agreeing tokens / tokens, over every prompt
  std::optional<double> mean_abs_logprob_delta;  // over every agreeing token with log-probabilities
  bool differ = false;                           // over a threshold
  // "5 prompts: 1 identical, token agreement 62%, first divergence at token
  // 3 (question 2), mean |d log p| 0.021: outputs differ".
  std::string Summary() const;
};

// Compares answers to the same prompts, in the same order. Errors are not
// possible: answers missing on one side count as wholly different.
OutputComparison CompareAnswers(const std::vector<Answer>& baseline, const std::vector<Answer>& changed,
                                const OutputThresholds& thresholds = {});

// {"prompts", "identical", "token_agreement", "mean_abs_logprob_delta",
// "differ", "answers": [{"prompt", "tokens", "agreeing", "first_divergence",
// "mean_abs_logprob_delta"}]}
boost::json::value OutputComparisonToJson(const OutputComparison& c);

}  // namespace goodput
