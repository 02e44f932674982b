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
  const client::EngineMetrics before = client::ScrapeEngineMetrics(o.endpoint);
  const std::optional<HostCpuSample> cpu_before = SampleHostCpu();
  GOODPUT_ASSIGN_OR_RETURN(std::vector<RequestRecord> records, client::RunLoad(o, workload, load, clock_));
  const std::optional<HostCpuSample> cpu_after = SampleHostCpu();
  const client::EngineMetrics after = client::ScrapeEngineMetrics(o.endpoint);
  MeasuredRun run;
  if (cpu_before && cpu_after) run.host_cpu = CpuUseBetween(*cpu_before, *cpu_after);
  run.engine = client::CountersBetween(before, after);
  run.records = std::move(records);
  run.window = MeasurementWindow(workload, run.records);
  return run;
}

std::string HttpTarget::Describe() const {
  return fmt::format("{} (model {}, {})", options_.endpoint.Url(), options_.model,
                     options_.chat ? "chat completions" : "completions with token-id prompts");
}

}  // namespace goodput
