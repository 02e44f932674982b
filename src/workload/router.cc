#include "workload/router.h"

#include <algorithm>
#include <numeric>

namespace goodput {
namespace {

constexpr RouterPolicy kPolicies[] = {RouterPolicy::kRoundRobin, RouterPolicy::kLeastOutstanding,
                                      RouterPolicy::kLeastKv, RouterPolicy::kPrefixAffinity, RouterPolicy::kSession};

// splitmix64: spreads keys that differ in a few bits over every replica.
uint64_t Mix(uint64_t z) {
  z += 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

int LeastOutstanding(const std::vector<ReplicaLoad>& loads) {
  return static_cast<int>(
      std::min_element(loads.begin(), loads.end(),
                       [](const ReplicaLoad& a, const ReplicaLoad& b) { return a.outstanding < b.outstanding; }) -
      loads.begin());
}

// The replica `key` hashes to, unless it is loaded beyond the bound.
int Affine(uint64_t key, const std::vector<ReplicaLoad>& loads) {
  const int home = static_cast<int>(Mix(key) % loads.size());
  const double total = std::accumulate(loads.begin(), loads.end(), 0.0,
                                       [](double s, const ReplicaLoad& l) { return s + l.outstanding; });
  const double bound = kAffinityLoadBound * (total / static_cast<double>(loads.size()) + 1);
  return static_cast<double>(loads[home].outstanding) < bound ? home : LeastOutstanding(loads);
}

}  // namespace

const char* RouterPolicyName(RouterPolicy p) {
  switch (p) {
    case RouterPolicy::kRoundRobin:
      return "round-robin";
    case RouterPolicy::kLeastOutstanding:
      return "least-outstanding";
    case RouterPolicy::kLeastKv:
      return "least-kv";
    case RouterPolicy::kPrefixAffinity:
      return "prefix-affinity";
    case RouterPolicy::kSession:
      return "session";
  }
  return "?";
}

std::optional<RouterPolicy> RouterPolicyFromName(const std::string& name) {
  for (RouterPolicy p : kPolicies) {
    if (name == RouterPolicyName(p)) return p;
  }
  return std::nullopt;
}

std::string RouterPolicyNames() {
  std::string out;
  for (RouterPolicy p : kPolicies) out += (out.empty() ? "" : ", ") + std::string(RouterPolicyName(p));
  return out;
}

std::optional<uint64_t> PrefixKey(const WorkItem& item) {
  if (item.prefix_tokens > 0) {
    return (static_cast<uint64_t>(item.class_index) << 32) | static_cast<uint32_t>(item.prefix_group);
  }
  if (!item.block_hashes.empty()) return static_cast<uint64_t>(item.block_hashes.front()) ^ (uint64_t{1} << 63);
  return std::nullopt;
}

int Router::Pick(const WorkItem& item, const std::vector<ReplicaLoad>& loads) {
  const auto n = static_cast<uint64_t>(loads.size());
  switch (policy_) {
    case RouterPolicy::kRoundRobin:
      return static_cast<int>(next_++ % n);
    case RouterPolicy::kLeastOutstanding:
      return LeastOutstanding(loads);
    case RouterPolicy::kLeastKv:
      return static_cast<int>(std::min_element(loads.begin(), loads.end(),
                                               [](const ReplicaLoad& a, const ReplicaLoad& b) {
                                                 return a.kv_usage < b.kv_usage ||
                                                        (a.kv_usage == b.kv_usage && a.outstanding < b.outstanding);
                                               }) -
                              loads.begin());
    case RouterPolicy::kPrefixAffinity: {
      const std::optional<uint64_t> key = PrefixKey(item);
      return key ? Affine(*key, loads) : LeastOutstanding(loads);
    }
    case RouterPolicy::kSession:
      // A conversation's turns together, else a closed-loop client's requests;
      // a request of neither goes where it is least queued.
      if (item.session >= 0) return Affine(static_cast<uint64_t>(item.session) << 1, loads);
      return item.client >= 0 ? Affine(static_cast<uint64_t>(item.client) << 1 | 1, loads) : LeastOutstanding(loads);
  }
  return 0;
}

}  // namespace goodput
