// What the engine behind an HTTP target did during a run, from its Prometheus
// /metrics page (vLLM's counter names, which goodput serve exports too): a
// run against a server reports its preemptions as the simulator does.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "client/endpoint.h"
#include "measure/run.h"

namespace goodput::client {

// The sum over every series of counter `name` (any labels) in a Prometheus
// text page; empty when the page has no such series.
std::optional<double> PrometheusCounter(std::string_view page, std::string_view name);

struct EngineMetrics {
  std::optional<double> preemptions;  // vllm:num_preemptions_total
  // vllm:spec_decode_num_drafts_total, _num_draft_tokens_total and
  // _num_accepted_tokens_total, when the server decodes speculatively.
  std::optional<double> spec_drafts, spec_draft_tokens, spec_accepted_tokens;
  // vllm:prefix_cache_queries_total and _hits_total (tokens), when the
  // server caches prefixes.
  std::optional<double> prefix_queries, prefix_hits;
};

// What happened between two scrapes: preemptions, the speculative decoding
// counts when both scrapes have them and drafts were made, and the prefix
// cache's when both have them and prompt tokens were looked up.
EngineCounters CountersBetween(const EngineMetrics& before, const EngineMetrics& after);

// The same over a fleet's endpoints (before[k] and after[k] scraped from
// endpoint k, `routed[k]` requests sent to it): the counters summed where
// every endpoint has them, and per endpoint its requests and prefix cache
// (EngineCounters::replicas, when there is more than one).
EngineCounters FleetCountersBetween(const std::vector<EngineMetrics>& before, const std::vector<EngineMetrics>& after,
                                    const std::vector<int64_t>& routed);

// The counters of a Prometheus page; empty fields for names it lacks.
EngineMetrics ParseEngineMetrics(std::string_view page);

// The engine's counters now; empty fields when the server has no /metrics
// (or not these names).
EngineMetrics ScrapeEngineMetrics(const Endpoint& e);

}  // namespace goodput::client
