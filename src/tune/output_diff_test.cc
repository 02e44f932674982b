#include "tune/output_diff.h"

#include <gtest/gtest.h>

namespace goodput {
namespace {

Answer A(const std::string& label, std::vector<std::string> tokens, std::vector<double> logprobs = {}) {
  return Answer{label, std::move(tokens), std::move(logprobs), ""};
}

TEST(CompareAnswers, IdenticalAnswersAgree) {
  const std::vector<Answer> a = {A("q1", {"a", "b", "c"}, {-0.1, -0.2, -0.3}), A("q2", {"x"}, {-1})};
  const OutputComparison c = CompareAnswers(a, a);
  EXPECT_EQ(c.prompts, 2);
  EXPECT_EQ(c.identical, 2);
  EXPECT_DOUBLE_EQ(c.token_agreement, 1);
  EXPECT_DOUBLE_EQ(*c.mean_abs_logprob_delta, 0);
  EXPECT_FALSE(c.differ);
  EXPECT_EQ(c.Summary(), "2 prompts: 2 identical, token agreement 100%, mean |d log p| 0.000: outputs agree");
}

// By hand: q1 parts at token 2 of 4 (2 agreeing), q2 agrees wholly (3 of 3),
// q3 is missing on the changed side (0 of 2): 5 of 9 tokens agree. The
// log-probabilities differ by 0.1 and 0.3 on q1's agreeing tokens and by 0
// on q2's: (0.1 + 0.3 + 0 + 0 + 0) / 5 = 0.08.
TEST(CompareAnswers, AgreementCountsTheTokensBeforeTheFirstDivergence) {
  const std::vector<Answer> base = {A("q1", {"a", "b", "c", "d"}, {-0.5, -0.5, -1, -1}),
                                    A("q2", {"x", "y", "z"}, {-1, -1, -1}), A("q3", {"m", "n"})};
  const std::vector<Answer> changed = {A("q1", {"a", "b", "e"}, {-0.4, -0.8, -2}),
                                       A("q2", {"x", "y", "z"}, {-1, -1, -1})};
  const OutputComparison c = CompareAnswers(base, changed);
  EXPECT_EQ(c.prompts, 3);
  EXPECT_EQ(c.identical, 1);
  EXPECT_NEAR(c.token_agreement, 5.0 / 9.0, 1e-12);
  EXPECT_EQ(*c.answers[0].first_divergence, 2);
  EXPECT_FALSE(c.answers[1].first_divergence.has_value());
  EXPECT_EQ(*c.answers[2].first_divergence, 0);
  EXPECT_NEAR(*c.answers[0].mean_abs_logprob_delta, 0.2, 1e-12);
  EXPECT_NEAR(*c.mean_abs_logprob_delta, 0.08, 1e-12);
  EXPECT_TRUE(c.differ);  // 56% < 90%
  EXPECT_NE(c.Summary().find("first divergence at token 0 (q3)"), std::string::npos) << c.Summary();
}

// The same tokens but log-probabilities far apart (a KV cache that rounds
// hard) differ by the second threshold; without log-probabilities only the
// tokens can tell.
TEST(CompareAnswers, LogProbabilitiesAloneCanMakeOutputsDiffer) {
  const std::vector<Answer> base = {A("q1", {"a", "b"}, {-0.1, -0.1})};
  const std::vector<Answer> changed = {A("q1", {"a", "b"}, {-0.5, -0.6})};
  const OutputComparison c = CompareAnswers(base, changed);
  EXPECT_EQ(c.identical, 1);
  EXPECT_NEAR(*c.mean_abs_logprob_delta, 0.45, 1e-12);
  EXPECT_TRUE(c.differ);
  const OutputComparison plain = CompareAnswers({A("q1", {"a", "b"})}, {A("q1", {"a", "b"})});
  EXPECT_FALSE(plain.mean_abs_logprob_delta.has_value());
  EXPECT_FALSE(plain.differ);
  EXPECT_NE(plain.Summary().find("no log-probabilities"), std::string::npos);
}

}  // namespace
}  // namespace goodput
