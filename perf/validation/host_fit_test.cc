#include "host_fit.h"

#include <gtest/gtest.h>

#include <cmath>

namespace goodput::validation {
namespace {

// A fake simulator: each row's figure comes out exp(distance) times the
// published one, the distance from the factors its source was measured under.
struct FakeSet {
  std::vector<Row> rows;
  std::map<std::string, HostFactors> truth;  // by source
  std::map<HostFactors, std::vector<Outcome>> memo;
  int simulations = 0;

  const std::vector<Outcome>& Evaluate(const HostFactors& h) {
    auto [it, fresh] = memo.try_emplace(h);
    if (!fresh) return it->second;
    ++simulations;
    for (const Row& r : rows) {
      const HostFactors& t = truth.at(r.source);
      const double d = std::fabs(h.step_overhead_s - t.step_overhead_s) * 100 +
                       std::fabs(h.per_sequence_s - t.per_sequence_s) * 1e4 +
                       std::fabs(h.frontend_latency_s - t.frontend_latency_s) * 10 +
                       std::fabs(h.kernel_latency_s - t.kernel_latency_s) * 1e5;
      it->second.push_back({&r, r.figures[0], r.figures[0].value * std::exp(d)});
    }
    return it->second;
  }
};

Row RowOf(const std::string& source, const std::string& fitted = "") {
  Row r;
  r.source = source;
  r.figures.push_back({Figure::kTpotP50, 10, fitted});
  return r;
}

TEST(HostFit, CoordinateDescentFindsTheFactorsTheFiguresWereMeasuredUnder) {
  FakeSet set;
  set.rows = {RowOf("A"), RowOf("A"), RowOf("B")};
  set.truth = {{"A", {0.001, 8e-5, 0.05, 3e-6}}, {"B", {0.001, 8e-5, 0.05, 3e-6}}};
  const EvaluateHost eval = [&](const HostFactors& h) -> const std::vector<Outcome>& { return set.Evaluate(h); };
  const HostFactors got = FitHostFactors(HostGrid{}, eval, {"A", "B"});
  EXPECT_DOUBLE_EQ(got.step_overhead_s, 0.001);
  EXPECT_DOUBLE_EQ(got.per_sequence_s, 8e-5);
  EXPECT_DOUBLE_EQ(got.frontend_latency_s, 0.05);
  EXPECT_DOUBLE_EQ(got.kernel_latency_s, 3e-6);
  EXPECT_LT(set.simulations, 4 * 8 * 6 * 8);  // fewer than the whole grid
  EXPECT_EQ(got.Flags(),
            "--step-overhead 0.001 --per-request-cost 8e-05 --frontend-latency 0.05 --kernel-latency 3e-06");
}

TEST(HostFit, EachSourceIsJudgedUnderFactorsFittedWithoutIt) {
  FakeSet set;
  set.rows = {RowOf("A"), RowOf("B"), RowOf("B"), RowOf("C")};
  set.truth = {{"A", {0.001, 4e-5, 0.02}}, {"B", {0.001, 4e-5, 0.02}}, {"C", {0.002, 1.6e-4, 0.1}}};
  const EvaluateHost eval = [&](const HostFactors& h) -> const std::vector<Outcome>& { return set.Evaluate(h); };
  const auto folds = LeaveOneSourceOut(HostGrid{}, eval, {"A", "B", "C"});
  ASSERT_EQ(folds.size(), 3u);
  // Without C, A and B agree: C is judged under their factors, not its own.
  EXPECT_DOUBLE_EQ(folds.at("C").per_sequence_s, 4e-5);
  EXPECT_DOUBLE_EQ(folds.at("C").frontend_latency_s, 0.02);
}

TEST(HostFit, TheErrorCountsHeldOutFiguresOfTheNamedSourcesOnly) {
  Row a = RowOf("A"), b = RowOf("B"), fitted = RowOf("A", "a factor");
  const std::vector<Outcome> outcomes = {
      {&a, a.figures[0], 20}, {&b, b.figures[0], 5}, {&fitted, fitted.figures[0], 1000}};
  EXPECT_NEAR(MedianLogError(outcomes, {"A"}), std::log(2.0), 1e-12);
  EXPECT_NEAR(MedianLogError(outcomes, {"A", "B"}), std::log(2.0), 1e-12);
  EXPECT_EQ(MedianLogError(outcomes, {"Z"}), 0);
}

}  // namespace
}  // namespace goodput::validation
