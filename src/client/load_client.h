// The load generator: sends a workload's requests to an OpenAI-compatible
// endpoint and records each one as docs/metrics.md defines it. Open-loop
// arrivals follow an absolute schedule (each send waits for its own arrival
// time on the run's clock, so lateness never accumulates) and every request
// records its send lag; closed-loop clients each keep one keep-alive
// connection and send their next request when the last one ends. Failed,
// timed-out and cut-off requests are recorded with their reason and stay in
// the SLO denominator. One thread runs the whole load.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "client/endpoint.h"
#include "core/clock.h"
#include "core/request_record.h"
#include "core/status.h"
#include "workload/router.h"
#include "workload/workload.h"

namespace goodput::client {

struct LoadOptions {
  Endpoint endpoint;
  // A fleet (--target URL1,URL2,...): `endpoint` and these; `router` picks
  // each request's (least-kv is not for a client, which cannot see KV usage).
  std::vector<Endpoint> more_endpoints;
  RouterPolicy router = RouterPolicy::kRoundRobin;
  std::string model;           // the "model" field of every request
  bool chat = false;           // /chat/completions (text prompts) instead of /completions (token ids)
  bool fixed_length = true;    // ignore_eos + min_tokens: exact output lengths
  double timeout_s = 600;      // per request, from its send
  bool insecure_tls = false;   // https: accept any certificate (self-signed test servers)
  uint64_t seed = 1;           // added to the workload's seed (repetitions differ)
  // Mixed into every prompt's token ids (not its length): runs with
  // different salts share no prompt block, so a prefix-caching server never
  // serves one run's prompts from what an earlier run left in its cache.
  uint64_t prompt_salt = 0;
  // When set, receives the clock time the run's record times count from.
  double* start_time = nullptr;
  // When set, receives the requests sent to each endpoint (endpoint first).
  std::vector<int64_t>* routed = nullptr;
  // One shard of a load that `shards` client processes generate together
  // (bench --shard): the open-loop requests shard, shard + shards, ... of
  // the common schedule (the same requests one client would send, split);
  // of a closed loop, clients shard, shard + shards, ... with their share of
  // the requests (drawn per shard, from the same distributions).
  int shard = 0, shards = 1;
  // When set, the run's clock starts at this wall-clock time (seconds since
  // the epoch), so that shards on several hosts start together.
  std::optional<double> start_at_epoch;
  // When set and true (it is checked every 20 ms), no further request is
  // sent and those in flight are abandoned: their records are dropped.
  std::function<bool()> stop;
  // Called after each finished request with (finished, total); may be empty.
  std::function<void(int64_t, int64_t)> progress;
};

// Runs the workload at `load` to the end of its request budget. Record times
// are seconds since the run's start on `clock`; records come in issue order.
// Errors: only a workload that issues nothing; per-request failures are in
// the records.
Result<std::vector<RequestRecord>> RunLoad(const LoadOptions& options, const Workload& workload,
                                           const ArrivalSpec& load, const Clock& clock);

// The routing policy `name` (RouterPolicyName) for a client in front of
// several servers: every policy but least-kv, which needs each server's KV
// usage. Errors name the policies a client can use.
Result<RouterPolicy> ClientRouterFromName(const std::string& name);

// `endpoint` then `more_endpoints`: every endpoint requests go to.
std::vector<Endpoint> AllEndpoints(const LoadOptions& o);

}  // namespace goodput::client
