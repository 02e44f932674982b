#include "workload/arrivals.h"

#include <cmath>

#include <gtest/gtest.h>

#include <algorithm>

namespace goodput {
namespace {

Workload OneClass(int64_t requests) {
  Workload w;
  w.requests = requests;
  RequestClass c;
  c.name = "chat";
  c.prompt = *LengthDistribution::FromSpec("fixed:100");
  c.output = *LengthDistribution::FromSpec("fixed:10");
  w.classes.push_back(c);
  return w;
}

std::vector<double> Gaps(RequestGenerator& g) {
  std::vector<double> gaps;
  double last = 0;
  while (auto t = g.NextOpenArrival()) {
    WorkItem item = g.PopOpen();
    gaps.push_back(item.t_arrival - last);
    last = item.t_arrival;
  }
  return gaps;
}

void MeanAndCv(const std::vector<double>& v, double* mean, double* cv) {
  double s = 0, sq = 0;
  for (double x : v) {
    s += x;
    sq += x * x;
  }
  *mean = s / v.size();
  *cv = std::sqrt(sq / v.size() - *mean * *mean) / *mean;
}

TEST(Arrivals, PoissonRateAndVariation) {
  Workload w = OneClass(20000);
  RequestGenerator g(w, ArrivalSpec{ArrivalKind::kPoisson, 1, 50.0, 1});
  double mean = 0, cv = 0;
  MeanAndCv(Gaps(g), &mean, &cv);
  EXPECT_NEAR(mean, 1.0 / 50, 0.02 / 50 * 2);  // within 2% (about 3 standard errors)
  EXPECT_NEAR(cv, 1.0, 0.03);                   // exponential gaps: CV 1
  EXPECT_EQ(g.issued(), 20000);
}

TEST(Arrivals, GammaBurstinessRaisesVariation) {
  Workload w = OneClass(20000);
  RequestGenerator g(w, ArrivalSpec{ArrivalKind::kGamma, 1, 50.0, 0.25});
  double mean = 0, cv = 0;
  MeanAndCv(Gaps(g), &mean, &cv);
  EXPECT_NEAR(mean, 1.0 / 50, 0.04 / 50);
  EXPECT_NEAR(cv, 2.0, 0.1);  // CV = 1 / sqrt(shape)
}

TEST(Arrivals, SameSeedSameRun) {
  Workload w = OneClass(50);
  w.classes[0].prompt = *LengthDistribution::FromSpec("uniform:1-1000");
  RequestGenerator a(w, ArrivalSpec{ArrivalKind::kPoisson, 1, 5, 1});
  RequestGenerator b(w, ArrivalSpec{ArrivalKind::kPoisson, 1, 5, 1});
  while (a.NextOpenArrival()) {
    WorkItem x = a.PopOpen(), y = b.PopOpen();
    EXPECT_EQ(x.t_arrival, y.t_arrival);
    EXPECT_EQ(x.prompt_tokens, y.prompt_tokens);
  }
  w.seed = 2;
  RequestGenerator c(w, ArrivalSpec{ArrivalKind::kPoisson, 1, 5, 1});
  const Workload seed_one = OneClass(50);
  RequestGenerator d(seed_one, ArrivalSpec{ArrivalKind::kPoisson, 1, 5, 1});
  EXPECT_NE(c.PopOpen().t_arrival, d.PopOpen().t_arrival);
}

TEST(Arrivals, ClosedLoopIssuesOnDemandWithinTheBudget) {
  Workload w = OneClass(5);
  RequestGenerator g(w, ArrivalSpec{ArrivalKind::kClosedLoop, 3, 1, 1});
  EXPECT_EQ(g.closed_clients(), 3);
  EXPECT_FALSE(g.NextOpenArrival().has_value());
  int n = 0;
  while (auto item = g.NextForClient(n % 3, n * 0.5)) {
    EXPECT_EQ(item->client, n % 3);
    EXPECT_DOUBLE_EQ(item->t_arrival, n * 0.5);
    ++n;
  }
  EXPECT_EQ(n, 5);
}

// Closed-loop think time: a client's first request goes at once, each later
// one a draw from the range after the last ended; the draws are the seed's
// (the same seed, the same pauses) and survive a command's load.
TEST(Arrivals, ClosedLoopClientsThinkBetweenRequests) {
  Workload w = OneClass(200);
  w.client_think = ThinkTime{0.1, 0.3};
  const ArrivalSpec two{ArrivalKind::kClosedLoop, 2, 1, 1};
  RequestGenerator g(w, two), again(w, two);
  EXPECT_EQ(g.NextForClient(0, 0)->t_arrival, 0);
  EXPECT_EQ(g.NextForClient(1, 0)->t_arrival, 0);
  again.NextForClient(0, 0);
  again.NextForClient(1, 0);
  double lo = 1, hi = 0;
  for (int i = 0; i < 100; ++i) {
    const double pause = g.NextForClient(i % 2, 5.0)->t_arrival - 5.0;
    EXPECT_EQ(again.NextForClient(i % 2, 5.0)->t_arrival - 5.0, pause);
    lo = std::min(lo, pause), hi = std::max(hi, pause);
  }
  EXPECT_GE(lo, 0.1);
  EXPECT_LE(hi, 0.3);
  EXPECT_GT(hi - lo, 0.15);  // drawn across the range, not a fixed pause
  Workload none = OneClass(10);
  RequestGenerator at_once(none, two);
  at_once.NextForClient(0, 0);
  EXPECT_EQ(at_once.NextForClient(0, 5.0)->t_arrival, 5.0);
}

TEST(Arrivals, SharesSplitTheStreamAndOwnRatesAddTheirOwn) {
  Workload w = OneClass(30000);
  RequestClass b = w.classes[0];
  b.name = "b";
  b.share = 3;
  w.classes.push_back(b);
  RequestClass own = w.classes[0];
  own.name = "own";
  own.rate = 10;
  w.classes.push_back(own);
  RequestGenerator g(w, ArrivalSpec{ArrivalKind::kPoisson, 1, 40, 1});
  int counts[3] = {0, 0, 0};
  while (g.NextOpenArrival()) ++counts[g.PopOpen().class_index];
  // 40/s split 1:3 between chat and b, plus 10/s of "own": shares 0.2, 0.6, 0.2.
  EXPECT_NEAR(counts[0] / 30000.0, 0.2, 0.01);
  EXPECT_NEAR(counts[1] / 30000.0, 0.6, 0.01);
  EXPECT_NEAR(counts[2] / 30000.0, 0.2, 0.01);
}

TEST(Arrivals, TraceReplayKeepsTimesLengthsAndClasses) {
  Workload w = OneClass(100);
  RequestClass b = w.classes[0];
  b.name = "batch";
  w.classes.push_back(b);
  w.trace = {{0.0, 7, 3, "", {}}, {0.25, 9, 4, "batch", {}}};
  RequestGenerator g(w, ArrivalSpec{ArrivalKind::kTrace, 1, 1, 1});
  WorkItem a = g.PopOpen();
  WorkItem c = g.PopOpen();
  EXPECT_EQ(a.prompt_tokens, 7);
  EXPECT_EQ(c.class_index, 1);
  EXPECT_DOUBLE_EQ(c.t_arrival, 0.25);
  EXPECT_FALSE(g.NextOpenArrival().has_value());
}

// A class with `prefix: {tokens: 32, groups: 2}`: every prompt starts with one
// of two 32-token prefixes (alternating), then differs; no two requests share
// any other block by accident.
TEST(Arrivals, SharedPrefixesAndOtherwiseDistinctPrompts) {
  Workload w = OneClass(6);
  w.classes[0].prefix_tokens = 32;
  w.classes[0].prefix_groups = 2;
  RequestGenerator g(w, ArrivalSpec{ArrivalKind::kPoisson, 0, 10, 1});
  std::vector<std::vector<int32_t>> ids;
  std::vector<WorkItem> items;
  while (g.NextOpenArrival()) {
    items.push_back(g.PopOpen());
    ids.push_back(PromptTokenIds(items.back(), 1));
    ASSERT_EQ(items.back().prompt_tokens, 132);
    ASSERT_EQ(ids.back().size(), 132u);
    for (int32_t t : ids.back()) ASSERT_TRUE(t >= 100 && t < 228);
  }
  ASSERT_EQ(ids.size(), 6u);
  const auto block = [&](size_t r, int b) {
    return std::vector<int32_t>(ids[r].begin() + b * 16, ids[r].begin() + b * 16 + 16);
  };
  for (size_t r = 0; r < 6; ++r) {
    EXPECT_EQ(items[r].prefix_group, static_cast<int>(r % 2));
    for (size_t o = r + 1; o < 6; ++o) {
      for (int b = 0; b < 2; ++b) EXPECT_EQ(block(r, b) == block(o, b), r % 2 == o % 2) << r << " " << o;
      for (int b = 2; b < 8; ++b) EXPECT_NE(block(r, b), block(o, b)) << r << " " << o << " block " << b;
    }
  }
  EXPECT_EQ(PromptTokenIds(items[0], 1), ids[0]);  // deterministic
  EXPECT_NE(PromptTokenIds(items[0], 2), ids[0]);  // and seeded
  // A salt changes every block, the shared prefix's too, and keeps the length.
  const auto salted = PromptTokenIds(items[0], 1, 7);
  ASSERT_EQ(salted.size(), ids[0].size());
  for (int b = 0; b < 8; ++b) {
    EXPECT_NE(std::vector<int32_t>(salted.begin() + b * 16, salted.begin() + b * 16 + 16), block(0, b)) << b;
  }
}

// A replayed Mooncake trace: blocks of 512 tokens with equal hash ids get equal
// token ids wherever they are sent, other blocks and the tail past the hashed
// blocks are the request's own, and a salt changes the shared blocks too.
TEST(Arrivals, TraceBlockHashesShareTokenIds) {
  Workload w = OneClass(3);
  w.trace = {TraceRow{0, 1024, 2, "", {1, 2}}, TraceRow{1, 1500, 2, "", {1, 2, 3}}, TraceRow{2, 1200, 2, "", {1, 9}}};
  RequestGenerator g(w, ArrivalSpec{ArrivalKind::kTrace, 0, 0, 1});
  std::vector<std::vector<int32_t>> ids;
  while (g.NextOpenArrival()) {
    const WorkItem item = g.PopOpen();
    ids.push_back(PromptTokenIds(item, 1));
    ASSERT_EQ(static_cast<int64_t>(ids.back().size()), w.trace[ids.size() - 1].input_tokens);
  }
  ASSERT_EQ(ids.size(), 3u);
  const auto block = [&](size_t r, int b, int len = 512) {
    return std::vector<int32_t>(ids[r].begin() + b * 512, ids[r].begin() + b * 512 + len);
  };
  EXPECT_EQ(block(0, 0), block(1, 0));
  EXPECT_EQ(block(0, 1), block(1, 1));
  EXPECT_EQ(block(0, 0), block(2, 0));
  EXPECT_NE(block(0, 1), block(2, 1));            // hash 9, not 2
  EXPECT_NE(block(1, 2, 176), block(2, 2, 176));  // hash 3 against the tail past request 3's hashes
  WorkItem first{};
  first.prompt_tokens = 1024;
  first.block_hashes = {1, 2};
  EXPECT_EQ(PromptTokenIds(first, 1), ids[0]);
  const auto salted = PromptTokenIds(first, 1, 7);
  EXPECT_NE(std::vector<int32_t>(salted.begin(), salted.begin() + 512), block(0, 0));
}

// A conversation of four turns: each turn's prompt is the previous turn's
// prompt, its answer and a new message (256 + 64 + 256 ...), sent the think
// time after the answer; the token ids of a turn's prompt begin with the
// previous turn's; the last turn has no next.
TEST(Arrivals, ConversationsCarryTheirHistory) {
  auto w = ParseWorkload(
      "name: c\nclasses:\n  - name: chat\n    session: {turns: fixed:4, think: 2s}\n"
      "    prompt: fixed:256\n    output: fixed:64\n",
      "c.yaml", ".");
  ASSERT_TRUE(w.ok()) << w.status().message();
  RequestGenerator gen(*w, ArrivalSpec{ArrivalKind::kPoisson, 1, 1, 1});
  WorkItem turn = gen.PopOpen();
  EXPECT_EQ(turn.session, turn.index);
  EXPECT_EQ(turn.turns, 4);
  std::vector<int64_t> prompts = {turn.prompt_tokens};
  for (int k = 1; k < 4; ++k) {
    auto next = gen.NextTurn(turn, 10.0 * k);
    ASSERT_TRUE(next.has_value()) << k;
    EXPECT_DOUBLE_EQ(next->t_arrival, 10.0 * k + 2);
    EXPECT_EQ(next->turn, k);
    EXPECT_EQ(next->session, turn.session);
    const std::vector<int32_t> before = PromptTokenIds(turn, w->seed), after = PromptTokenIds(*next, w->seed);
    EXPECT_TRUE(std::equal(before.begin(), before.end(), after.begin())) << "turn " << k;
    prompts.push_back(next->prompt_tokens);
    turn = *next;
  }
  EXPECT_EQ(prompts, (std::vector<int64_t>{256, 576, 896, 1216}));
  EXPECT_FALSE(gen.NextTurn(turn, 50).has_value());
  // Two conversations share nothing but the class's prefix (none here).
  const WorkItem other = gen.PopOpen();
  const std::vector<int32_t> last = PromptTokenIds(turn, w->seed);
  EXPECT_NE(PromptTokenIds(other, w->seed), std::vector<int32_t>(last.begin(), last.begin() + 256));
  for (const char* bad :
       {"session: 4", "session: {think: 2s}", "session: {turns: fixed:0}", "session: {turns: fixed:5000}",
        "session: {turns: fixed:2, think: soon}", "session: {turns: fixed:2, think: 2h}",
        "session: {turns: fixed:2, think: 5s-1s}", "session: {turns: fixed:2, think: 5}"}) {
    auto b = ParseWorkload(
        std::string("name: c\nclasses:\n  - name: chat\n    ") + bad + "\n    prompt: fixed:1\n    output: fixed:1\n",
        "c.yaml", ".");
    ASSERT_FALSE(b.ok()) << bad;
    EXPECT_NE(b.status().message().find("c.yaml:"), std::string::npos) << b.status().message();
  }
}

// A conversation's think time may be a range, as a closed-loop client's:
// each next turn is drawn from it (uniformly: the gaps spread over the range,
// none outside it), the same gaps again for the same seed; "0" sends at once.
TEST(Arrivals, ConversationThinkTimeDrawnFromItsRange) {
  const auto gaps = [](const std::string& think) {
    auto w = ParseWorkload("name: c\nclasses:\n  - name: chat\n    session: {turns: fixed:50, think: " + think +
                               "}\n    prompt: fixed:8\n    output: fixed:4\n",
                           "c.yaml", ".");
    EXPECT_TRUE(w.ok()) << w.status().message();
    std::vector<double> out;
    if (!w.ok()) return out;
    w->requests = 100;
    RequestGenerator gen(*w, ArrivalSpec{ArrivalKind::kPoisson, 1, 1, 1});
    WorkItem turn = gen.PopOpen();
    for (auto next = gen.NextTurn(turn, 100); next; next = gen.NextTurn(turn, 100)) {
      out.push_back(next->t_arrival - 100);
      turn = *next;
    }
    return out;
  };
  const std::vector<double> range = gaps("1s-3s");
  ASSERT_EQ(range.size(), 49u);
  const auto [lo, hi] = std::minmax_element(range.begin(), range.end());
  EXPECT_GE(*lo, 1.0);
  EXPECT_LE(*hi, 3.0);
  EXPECT_LT(*lo, 1.5);  // all 49 uniform draws above 1.5 s: odds 0.75^49, under 1e-6
  EXPECT_GT(*hi, 2.5);
  EXPECT_EQ(gaps("1s-3s"), range);
  EXPECT_EQ(gaps("0"), std::vector<double>(49, 0.0));
  EXPECT_EQ(gaps("0-2s").size(), 49u);
}

}  // namespace
}  // namespace goodput
