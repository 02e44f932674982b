#include "tune/output_diff.h"

#include <algorithm>
#include <cmath>

#include <boost/json.hpp>
#include <fmt/format.h>

namespace goodput {
namespace json = boost::json;
namespace {

AnswerDiff Diff(const Answer* a, const Answer* b, double& delta_sum, int64_t& delta_count) {
  AnswerDiff d;
  d.prompt_label = a ? a->prompt_label : b->prompt_label;
  const size_t na = a ? a->tokens.size() : 0, nb = b ? b->tokens.size() : 0;
  d.tokens = static_cast<int64_t>(std::max(na, nb));
  size_t i = 0;
  while (i < std::min(na, nb) && a->tokens[i] == b->tokens[i]) ++i;
  d.agreeing = static_cast<int64_t>(i);
  if (i < std::max(na, nb) || !a || !b) d.first_divergence = static_cast<int64_t>(i);
  if (!a || !b || a->logprobs.size() < i || b->logprobs.size() < i || i == 0) return d;
  double sum = 0;
  for (size_t k = 0; k < i; ++k) sum += std::abs(a->logprobs[k] - b->logprobs[k]);
  d.mean_abs_logprob_delta = sum / static_cast<double>(i);
  delta_sum += sum;
  delta_count += static_cast<int64_t>(i);
  return d;
}

}  // namespace

OutputComparison CompareAnswers(const std::vector<Answer>& baseline, const std::vector<Answer>& changed,
                                const OutputThresholds& t) {
  OutputComparison c;
  const size_t n = std::max(baseline.size(), changed.size());
  double delta_sum = 0;
  int64_t delta_count = 0, tokens = 0, agreeing = 0;
  for (size_t i = 0; i < n; ++i) {
    const Answer* a = i < baseline.size() ? &baseline[i] : nullptr;
    const Answer* b = i < changed.size() ? &changed[i] : nullptr;
    AnswerDiff d = Diff(a, b, delta_sum, delta_count);
    tokens += d.tokens;
    agreeing += d.agreeing;
    c.identical += !d.first_divergence;
    c.answers.push_back(std::move(d));
  }
  c.prompts = static_cast<int64_t>(n);
  c.token_agreement = tokens > 0 ? static_cast<double>(agreeing) / static_cast<double>(tokens) : 1;
  if (delta_count > 0) c.mean_abs_logprob_delta = delta_sum / static_cast<double>(delta_count);
  c.differ = c.token_agreement < t.min_token_agreement ||
             (c.mean_abs_logprob_delta && *c.mean_abs_logprob_delta > t.max_mean_abs_logprob_delta);
  return c;
}

std::string OutputComparison::Summary() const {
  std::string s = fmt::format("{} prompt{}: {} identical, token agreement {:.0f}%", prompts, prompts == 1 ? "" : "s",
                              identical, 100 * token_agreement);
  const AnswerDiff* earliest = nullptr;
  for (const AnswerDiff& d : answers) {
    if (d.first_divergence && (!earliest || *d.first_divergence < *earliest->first_divergence)) earliest = &d;
  }
  if (earliest)
    s += fmt::format(", first divergence at token {} ({})", *earliest->first_divergence, earliest->prompt_label);
  if (mean_abs_logprob_delta) s += fmt::format(", mean |d log p| {:.3f}", *mean_abs_logprob_delta);
  else s += ", no log-probabilities";
  return s + (differ ? ": outputs differ" : ": outputs agree");
}

json::value OutputComparisonToJson(const OutputComparison& c) {
  json::array answers;
  for (const AnswerDiff& d : c.answers) {
    answers.push_back(json::object{
        {"prompt", d.prompt_label},
        {"tokens", d.tokens},
        {"agreeing", d.agreeing},
        {"first_divergence", d.first_divergence ? json::value(*d.first_divergence) : nullptr},
        {"mean_abs_logprob_delta", d.mean_abs_logprob_delta ? json::value(*d.mean_abs_logprob_delta) : nullptr}});
  }
  return json::object{
      {"prompts", c.prompts},
      {"identical", c.identical},
      {"token_agreement", c.token_agreement},
      {"mean_abs_logprob_delta", c.mean_abs_logprob_delta ? json::value(*c.mean_abs_logprob_delta) : nullptr},
      {"differ", c.differ},
      {"answers", answers}};
}

}  // namespace goodput
