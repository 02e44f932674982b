// Prometheus metrics with vLLM's names, so existing dashboards work:
// vllm:num_requests_running / _waiting, vllm:kv_cache_usage_perc (and the
// older vllm:gpu_cache_usage_perc), token and preemption counters, and
// TTFT / TPOT / end-to-end latency histograms.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "engine/engine_service.h"

namespace goodput::server {

class Histogram {
 public:
  explicit Histogram(std::vector<double> bounds) : bounds_(std::move(bounds)), counts_(bounds_.size() + 1, 0) {}
  void Observe(double v);
  // Prometheus text lines for `name` (cumulative buckets, sum, count).
  std::string Render(const std::string& name, const std::string& help, const std::string& labels) const;

 private:
  std::vector<double> bounds_;
  std::vector<uint64_t> counts_;
  double sum_ = 0;
};

class Metrics {
 public:
  explicit Metrics(std::string model_name);
  // One finished request's latencies (seconds); tpot < 0 when it had < 2 tokens.
  void ObserveRequest(double ttft, double tpot, double e2e);
  std::string Render(const EngineStats& stats) const;

 private:
  std::string labels_;
  mutable std::mutex mu_;
  Histogram ttft_, tpot_, e2e_;
};

}  // namespace goodput::server
