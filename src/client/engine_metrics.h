// What the engine behind an HTTP target did during a run, from its Prometheus
// /metrics page (vLLM's counter names, which goodput serve exports too): a
// run against a server reports its preemptions as the simulator does.
#pragma once

#include <optional>
#include <string_view>

#include "client/endpoint.h"

namespace goodput::client {

// The sum over every series of counter `name` (any labels) in a Prometheus
// text page; empty when the page has no such series.
std::optional<double> PrometheusCounter(std::string_view page, std::string_view name);

struct EngineMetrics {
  std::optional<double> preemptions;  // vllm:num_preemptions_total
};

// The engine's counters now; empty fields when the server has no /metrics
// (or not these names).
EngineMetrics ScrapeEngineMetrics(const Endpoint& e);

}  // namespace goodput::client
