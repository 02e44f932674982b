// The simulator: the engine's own Scheduler and KvCacheManager driven by a
// virtual clock and the cost model, fed by a workload. Discrete events:
// arrivals, and step ends. It produces the same per-request records the load
// generator does, for the same SLO/metrics code (sim/sim_target.h makes it a
// measurement Target).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "core/request_record.h"
#include "core/slo.h"
#include "core/status.h"
#include "engine/engine_core.h"
#include "engine/kv_cache_manager.h"
#include "engine/scheduler.h"
#include "hw/cost_model.h"
#include "sim/engine_loop.h"
#include "sim/kv_transfer.h"
#include "workload/router.h"
#include "workload/workload.h"

namespace goodput {

// A disaggregated fleet's prefill instances when they are sized apart from
// the decode instances (their own tensor-parallel size, so their own plan):
// their engine settings, KV pool and step costs.
struct PrefillPool {
  int tensor_parallel = 1;
  SchedulerConfig scheduler;
  std::vector<KvGroupSpec> kv_groups;
  int64_t num_blocks = 0;
  int64_t kv_block_bytes = 0;  // one GPU's share of a block
  std::shared_ptr<const CostModel> cost;
};

struct SimOptions {
  SchedulerConfig scheduler;          // slo_step_target is derived from the workload's SLO
  std::vector<KvGroupSpec> kv_groups;
  int64_t num_blocks = 0;
  double acceptance_rate = 0;         // speculative decoding (scheduler.num_speculative_tokens > 0)
  double slo_headroom = 0.9;          // slo policy: keep steps within this share of the TPOT target
  uint64_t seed = 1;                  // added to the workload's seed: repetitions differ
  bool record_token_times = false;    // keep each step's token times in the records (for ITL)
  bool prefix_caching = false;        // the KV manager shares cached prefixes (requests get token ids)
  // The engine's loop around its steps: the time between them, and when a
  // closed-loop client's next request reaches the engine (goodput serve's,
  // from a calibration; by default none, and 1 ms).
  EngineLoop engine_loop;
  // Told each simulated step and its modeled times, as goodput serve's engine
  // tells its step log (goodput sim --step-log); may be empty.
  StepObserver step_observer;
  // A fleet: this many engine instances, each with its own scheduler, KV pool
  // and clock on one timeline, and the router that spreads the requests.
  int replicas = 1;
  RouterPolicy router = RouterPolicy::kRoundRobin;
  // Prefill/decode disaggregation: with prefill_replicas > 0, that many more
  // instances come first and only prefill (each request's prompt and one
  // token, which its client never sees); the prompt's KV then moves over
  // `kv_link` (kv_block_bytes a block per GPU; an instance's transfers one
  // after another, its blocks held until read) to one of the `replicas`
  // instances, which decode it. The router picks within each pool.
  int prefill_replicas = 0;
  KvLink kv_link;
  int64_t kv_block_bytes = 0;
  // The prefill instances' own settings and costs; none: the same as the
  // decode instances'. A prompt's KV then takes the longer of the two sides'
  // transfers (the GPU with the larger share moves it all over its one link).
  std::shared_ptr<const PrefillPool> prefill_pool;
};

// One engine instance of a run.
struct ReplicaStats {
  bool prefill = false;  // a disaggregated fleet's prefill instance
  int64_t requests = 0;  // routed to it
  int64_t steps = 0;
  int64_t prefix_queried_tokens = 0;  // its prefix cache, as SimRun's
  int64_t prefix_hit_tokens = 0;
};

struct SimRun {
  std::vector<RequestRecord> records;  // in issue order
  int64_t prefix_queried_tokens = 0;   // prompt tokens looked up in the prefix cache
  int64_t prefix_hit_tokens = 0;       // of those, found
  int64_t steps = 0;
  int64_t preemptions = 0;
  int64_t rejected = 0;
  double simulated_seconds = 0;
  double peak_kv_usage = 0;
  int64_t peak_running = 0;          // most requests computed in one step
  int64_t draft_steps = 0;           // request-steps that verified drafts
  int64_t draft_step_tokens = 0;     // tokens those produced (accepted drafts + 1 each)
  int64_t drafted_tokens = 0;        // drafts proposed in those steps
  std::vector<ReplicaStats> replicas;  // one per engine instance (SimOptions::replicas)
};

// Runs `workload` at `load` (closed-loop concurrency or an arrival rate) to
// the end of its request budget. Errors: a configuration that stalls (no
// request can ever be scheduled).
Result<SimRun> Simulate(const Workload& workload, const ArrivalSpec& load, const SimOptions& options,
                        const CostModel& cost);

// The per-position chance of accepting a draft (each of a step's `k`
// drafts in turn, until the first rejection, as the simulator draws them)
// that accepts `accepted` of them on average: a + a^2 + ... + a^k =
// accepted. vLLM reports acceptance as accepted / proposed (accepted =
// rate x k) and its mean acceptance length as 1 + accepted. Errors:
// k < 1, accepted outside [0, k].
Result<double> PerPositionAcceptance(int k, double accepted);

// The longest step the slo policy allows: the tightest interactive TPOT
// target x headroom x tokens per step (speculative decoding yields more than
// one). Infinite when no class has a TPOT target.
double SloStepTarget(const Workload& workload, double headroom, int num_spec, double acceptance);

}  // namespace goodput
