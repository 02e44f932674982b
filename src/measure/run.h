// One run of a workload against a Target, as the measurement layer sees it:
// the per-request records (docs/metrics.md), the window they are judged over,
// and whatever engine counters the target can see (the simulator sees its
// steps and preemptions; an HTTP target its server's preemptions when the
// server has vLLM's /metrics).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "core/host_load.h"
#include "core/request_record.h"
#include "core/slo.h"
#include "workload/workload.h"

namespace goodput {

// Speculative decoding as vLLM counts it (its spec_decode_* counters): each
// request-step that verified drafts is one draft of `draft_tokens` tokens,
// of which `accepted_tokens` were kept.
struct SpecDecodeCounts {
  double drafts = 0, draft_tokens = 0, accepted_tokens = 0;
  // vLLM's "Draft acceptance rate": accepted / proposed.
  double acceptance() const { return draft_tokens > 0 ? accepted_tokens / draft_tokens : 0; }
  // vLLM's "Mean acceptance length": tokens per verifying step, the bonus token included.
  double mean_acceptance_length() const { return drafts > 0 ? 1 + accepted_tokens / drafts : 0; }
  SpecDecodeCounts& operator+=(const SpecDecodeCounts& o) {
    drafts += o.drafts, draft_tokens += o.draft_tokens, accepted_tokens += o.accepted_tokens;
    return *this;
  }
};

// The prefix cache over a run, in vLLM's counters' terms: prompt tokens of
// admitted requests looked up, and of those found.
struct PrefixCacheCounts {
  double queries = 0, hits = 0;
  double hit_rate() const { return queries > 0 ? hits / queries : 0; }
  PrefixCacheCounts& operator+=(const PrefixCacheCounts& o) {
    queries += o.queries, hits += o.hits;
    return *this;
  }
};

// One engine instance of a fleet (goodput sim --replicas): the requests
// routed to it, its steps and its prefix cache.
struct ReplicaCounts {
  double requests = 0, steps = 0;
  PrefixCacheCounts prefix_cache;
  bool prefill = false;  // a disaggregated fleet's prefill instance
  ReplicaCounts& operator+=(const ReplicaCounts& o) {
    requests += o.requests, steps += o.steps, prefix_cache += o.prefix_cache, prefill = prefill || o.prefill;
    return *this;
  }
};

struct EngineCounters {
  int64_t steps = 0;
  std::optional<int64_t> preemptions;  // empty: the target cannot see them
  int64_t rejected = 0;  // requests the engine refused (longer than the max model length or the KV pool)
  std::optional<SpecDecodeCounts> spec_decode;  // empty: no drafts, or the target cannot see them
  std::optional<PrefixCacheCounts> prefix_cache;  // empty: no prefix caching, or the target cannot see it
  std::vector<ReplicaCounts> replicas;            // a fleet's instances; empty for one engine
};

struct MeasuredRun {
  std::vector<RequestRecord> records;  // in issue order
  Window window;                       // the measurement window (warm-up and cool-down excluded)
  EngineCounters engine;
  // This host's CPU time during the run and what other processes and the
  // hypervisor's steal took of it (core/host_load.h); empty where the target
  // is simulated or /proc is unreadable.
  std::optional<HostCpuUse> host_cpu;
};

// The window of `records`: the workload's warm-up and cool-down applied to
// the requests' arrivals. A closed loop's first wave (records marked
// first_wave) is always warm-up. An offline batch (every request arriving at
// once) is measured from its arrival to its last token: its drain.
Window MeasurementWindow(const Workload& workload, const std::vector<RequestRecord>& records);

}  // namespace goodput
