#include "server/metrics.h"

#include <algorithm>

#include <fmt/format.h>

namespace goodput::server {

void Histogram::Observe(double v) {
  const size_t i = std::lower_bound(bounds_.begin(), bounds_.end(), v) - bounds_.begin();
  ++counts_[i];
  sum_ += v;
}

std::string Histogram::Render(const std::string& name, const std::string& help, const std::string& labels) const {
  std::string s = fmt::format("# HELP {} {}\n# TYPE {} histogram\n", name, help, name);
  uint64_t cum = 0;
  for (size_t i = 0; i < bounds_.size(); ++i) {
    cum += counts_[i];
    s += fmt::format("{}_bucket{{{},le=\"{:g}\"}} {}\n", name, labels, bounds_[i], cum);
  }
  cum += counts_.back();
  s += fmt::format("{}_bucket{{{},le=\"+Inf\"}} {}\n", name, labels, cum);
  s += fmt::format("{}_sum{{{}}} {:.9g}\n{}_count{{{}}} {}\n", name, labels, sum_, name, labels, cum);
  return s;
}

Metrics::Metrics(std::string model_name)
    : labels_(fmt::format("model_name=\"{}\"", model_name)),
      ttft_({0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0}),
      tpot_({0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0}),
      e2e_({0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0, 120.0}) {}

void Metrics::ObserveRequest(double ttft, double tpot, double e2e) {
  std::lock_guard<std::mutex> lock(mu_);
  if (ttft >= 0) ttft_.Observe(ttft);
  if (tpot >= 0) tpot_.Observe(tpot);
  if (e2e >= 0) e2e_.Observe(e2e);
}

std::string Metrics::Render(const EngineStats& st) const {
  auto gauge = [&](const char* name, const char* help, double v) {
    return fmt::format("# HELP {} {}\n# TYPE {} gauge\n{}{{{}}} {:g}\n", name, help, name, name, labels_, v);
  };
  auto counter = [&](const char* name, const char* help, int64_t v) {
    return fmt::format("# HELP {} {}\n# TYPE {} counter\n{}{{{}}} {}\n", name, help, name, name, labels_, v);
  };
  std::string s;
  s += gauge("vllm:num_requests_running", "Requests in the running batch.", static_cast<double>(st.running));
  s += gauge("vllm:num_requests_waiting", "Requests waiting to be scheduled.", static_cast<double>(st.waiting));
  s += gauge("vllm:kv_cache_usage_perc", "KV cache usage (1 = full).", st.kv_usage);
  s += gauge("vllm:gpu_cache_usage_perc", "KV cache usage (1 = full); older vLLM name.", st.kv_usage);
  s += counter("vllm:prompt_tokens_total", "Prefill tokens processed.", st.prompt_tokens_total);
  s += counter("vllm:generation_tokens_total", "Generation tokens produced.", st.generation_tokens_total);
  s += counter("vllm:num_preemptions_total", "Preemptions (recompute).", st.preemptions_total);
  s += counter("vllm:prefix_cache_queries_total", "Tokens of admitted requests looked up in the prefix cache.",
               st.prefix_cache_queries_total);
  s += counter("vllm:prefix_cache_hits_total", "Of those, tokens found in the prefix cache.",
               st.prefix_cache_hits_total);
  s += counter("vllm:request_success_total", "Requests finished.", st.requests_finished_total);
  std::lock_guard<std::mutex> lock(mu_);
  s += ttft_.Render("vllm:time_to_first_token_seconds", "Time to first token.", labels_);
  s += tpot_.Render("vllm:time_per_output_token_seconds", "Time per output token after the first.", labels_);
  s += e2e_.Render("vllm:e2e_request_latency_seconds", "End-to-end request latency.", labels_);
  return s;
}

}  // namespace goodput::server
