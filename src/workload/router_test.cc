#include "workload/router.h"

#include <gtest/gtest.h>

namespace goodput {
namespace {

WorkItem Item(int64_t index, int client = -1, int64_t prefix_tokens = 0, int prefix_group = 0) {
  WorkItem w;
  w.index = index;
  w.client = client;
  w.prefix_tokens = prefix_tokens;
  w.prefix_group = prefix_group;
  return w;
}

std::vector<ReplicaLoad> Loads(std::vector<int64_t> outstanding, std::vector<double> kv = {}) {
  std::vector<ReplicaLoad> out;
  for (size_t k = 0; k < outstanding.size(); ++k) out.push_back({outstanding[k], k < kv.size() ? kv[k] : 0.0});
  return out;
}

TEST(Router, NamesRoundTrip) {
  for (const char* name : {"round-robin", "least-outstanding", "least-kv", "prefix-affinity", "session"}) {
    auto p = RouterPolicyFromName(name);
    ASSERT_TRUE(p.has_value()) << name;
    EXPECT_STREQ(RouterPolicyName(*p), name);
  }
  EXPECT_FALSE(RouterPolicyFromName("random").has_value());
  EXPECT_EQ(RouterPolicyNames(), "round-robin, least-outstanding, least-kv, prefix-affinity, session");
}

TEST(Router, RoundRobinTakesEachInTurn) {
  Router r(RouterPolicy::kRoundRobin);
  const auto loads = Loads({5, 0, 9});
  std::vector<int> picks;
  for (int i = 0; i < 6; ++i) picks.push_back(r.Pick(Item(i), loads));
  EXPECT_EQ(picks, (std::vector<int>{0, 1, 2, 0, 1, 2}));
}

TEST(Router, LeastLoadedPicksTheFewestOrTheEmptiestFirstOfEquals) {
  Router least(RouterPolicy::kLeastOutstanding);
  EXPECT_EQ(least.Pick(Item(0), Loads({3, 1, 1, 2})), 1);
  Router kv(RouterPolicy::kLeastKv);
  EXPECT_EQ(kv.Pick(Item(0), Loads({0, 9, 4}, {0.5, 0.2, 0.2})), 2);  // equal usage: fewer outstanding
}

// Requests of one shared prefix stay together; distinct prefixes spread;
// an overloaded home gives way to the least loaded replica; a prompt that
// shares nothing goes where it is least queued.
TEST(Router, PrefixAffinityKeepsAPrefixTogetherWithinTheBound) {
  Router r(RouterPolicy::kPrefixAffinity);
  const auto even = Loads({2, 2, 2, 2});
  const int home = r.Pick(Item(0, -1, 512, 3), even);
  for (int i = 1; i < 20; ++i) EXPECT_EQ(r.Pick(Item(i, -1, 512, 3), even), home);
  std::vector<int> seen(4, 0);
  for (int g = 0; g < 64; ++g) ++seen[static_cast<size_t>(r.Pick(Item(g, -1, 512, g), even))];
  for (int k = 0; k < 4; ++k) EXPECT_GT(seen[static_cast<size_t>(k)], 4) << "replica " << k;
  // Mean 2.75 over four: the bound is 1.25 x 3.75 = 4.69; the home at 8 is over it.
  std::vector<int64_t> loaded = {1, 1, 1, 1};
  loaded[static_cast<size_t>(home)] = 8;
  const int other = r.Pick(Item(30, -1, 512, 3), Loads(loaded));
  EXPECT_NE(other, home);
  EXPECT_EQ(r.Pick(Item(31), Loads({4, 0, 4, 4})), 1);
}

TEST(Router, SessionAffinityKeepsAClientsRequestsTogether) {
  Router r(RouterPolicy::kSession);
  const auto even = Loads({1, 1, 1});
  const int home = r.Pick(Item(0, 7), even);
  for (int i = 1; i < 10; ++i) EXPECT_EQ(r.Pick(Item(i, 7), even), home);
  EXPECT_EQ(r.Pick(Item(11, -1), Loads({3, 2, 0})), 2);  // open loop: no session
  WorkItem turn = Item(20, -1);
  turn.session = 20;
  const int conversation = r.Pick(turn, even);
  for (int k = 1; k < 4; ++k) {
    turn.index = 20 + k;
    turn.turn = k;
    EXPECT_EQ(r.Pick(turn, even), conversation);  // every turn of a conversation together
  }
}

TEST(Router, PrefixKeysTellSharedPrefixesApart) {
  EXPECT_FALSE(PrefixKey(Item(0)).has_value());
  EXPECT_EQ(PrefixKey(Item(0, -1, 100, 2)), PrefixKey(Item(9, -1, 100, 2)));
  EXPECT_NE(PrefixKey(Item(0, -1, 100, 2)), PrefixKey(Item(0, -1, 100, 3)));
  WorkItem traced = Item(0);
  traced.block_hashes = {42, 43};
  WorkItem same = Item(5);
  same.block_hashes = {42, 99};
  EXPECT_EQ(PrefixKey(traced), PrefixKey(same));
}

}  // namespace
}  // namespace goodput
