// Which engine instance of a fleet gets a request: the policies request
// routers in front of several replicas use (Kubernetes' round-robin, the
// least-loaded pickers of vLLM's production stack and llm-d, prefix-aware
// routing as SGLang's router does it). The simulator routes with it over
// its simulated replicas; the load generator over several endpoints.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "workload/arrivals.h"

namespace goodput {

enum class RouterPolicy {
  kRoundRobin,        // each replica in turn
  kLeastOutstanding,  // the fewest requests sent and not finished
  kLeastKv,           // the lowest KV cache usage (as the replica last reported it)
  kPrefixAffinity,    // requests sharing a prompt prefix to one replica, within a load bound
  kSession,           // a conversation's turns (else a closed-loop client's requests) to one replica
};
const char* RouterPolicyName(RouterPolicy p);  // "round-robin", "least-outstanding", ...
// The policy RouterPolicyName calls `name`; nullopt for any other name.
std::optional<RouterPolicy> RouterPolicyFromName(const std::string& name);
// "round-robin, least-outstanding, least-kv, prefix-affinity, session".
std::string RouterPolicyNames();

// What the router sees of a replica when it routes.
struct ReplicaLoad {
  int64_t outstanding = 0;  // requests routed to it and not finished
  double kv_usage = 0;      // share of its KV blocks in use
};

// Affinity policies keep a request on its replica unless that replica holds
// more than this many times the mean outstanding requests (plus one): then
// the least outstanding replica takes it. Consistent hashing with bounded
// loads (Mirrokni, Thorup and Zadimoghaddam, 2018) with 1 + epsilon = 1.25.
constexpr double kAffinityLoadBound = 1.25;

class Router {
 public:
  explicit Router(RouterPolicy policy) : policy_(policy) {}

  // The replica (an index into `loads`, which is not empty) for `item`.
  // Ties go to the lowest index.
  int Pick(const WorkItem& item, const std::vector<ReplicaLoad>& loads);

  RouterPolicy policy() const { return policy_; }

 private:
  RouterPolicy policy_;
  uint64_t next_ = 0;  // round-robin's turn
};

// The prefix a request shares with others, as a routing key: its class's
// shared prefix (class and group), or a replayed trace's first block hash;
// nullopt when the prompt shares nothing.
std::optional<uint64_t> PrefixKey(const WorkItem& item);

}  // namespace goodput
