#include "client/http_target.h"

#include <random>

#include <fmt/format.h>

#include "client/engine_metrics.h"
#include "core/host_load.h"

namespace goodput {

HttpTarget::HttpTarget(client::LoadOptions options) : options_(std::move(options)) {
  options_.prompt_salt = std::random_device{}();
  options_.prompt_salt = options_.prompt_salt << 32 | std::random_device{}();
}

Result<MeasuredRun> HttpTarget::Run(const Workload& workload, const ArrivalSpec& load, int repetition) {
  client::LoadOptions o = options_;
  o.seed = static_cast<uint64_t>(repetition);
  o.prompt_salt = options_.prompt_salt + ++runs_;
  const std::vector<client::Endpoint> endpoints = client::AllEndpoints(o);
  std::vector<client::EngineMetrics> before;
  for (const client::Endpoint& e : endpoints) before.push_back(client::ScrapeEngineMetrics(e));
  std::vector<int64_t> routed;
  o.routed = &routed;
  const std::optional<HostCpuSample> cpu_before = SampleHostCpu();
  GOODPUT_ASSIGN_OR_RETURN(std::vector<RequestRecord> records, client::RunLoad(o, workload, load, clock_));
  const std::optional<HostCpuSample> cpu_after = SampleHostCpu();
  std::vector<client::EngineMetrics> after;
  for (const client::Endpoint& e : endpoints) after.push_back(client::ScrapeEngineMetrics(e));
  MeasuredRun run;
  if (cpu_before && cpu_after) run.host_cpu = CpuUseBetween(*cpu_before, *cpu_after);
  run.engine = client::FleetCountersBetween(before, after, routed);
  run.records = std::move(records);
  run.window = MeasurementWindow(workload, run.records);
  return run;
}

std::string HttpTarget::Describe() const {
  std::string urls;
  for (const client::Endpoint& e : client::AllEndpoints(options_)) urls += (urls.empty() ? "" : ", ") + e.Url();
  const std::string routing = options_.more_endpoints.empty()
                                  ? ""
                                  : fmt::format(", {} routing in the client", RouterPolicyName(options_.router));
  return fmt::format("{} (model {}, {}{})", urls, options_.model,
                     options_.chat ? "chat completions" : "completions with token-id prompts", routing);
}

}  // namespace goodput
