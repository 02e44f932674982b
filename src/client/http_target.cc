#include "client/http_target.h"

#include <fmt/format.h>

namespace goodput {

Result<MeasuredRun> HttpTarget::Run(const Workload& workload, const ArrivalSpec& load, int repetition) {
  client::LoadOptions o = options_;
  o.seed = static_cast<uint64_t>(repetition);
  GOODPUT_ASSIGN_OR_RETURN(std::vector<RequestRecord> records, client::RunLoad(o, workload, load, clock_));
  MeasuredRun run;
  run.records = std::move(records);
  run.window = MeasurementWindow(workload, run.records);
  return run;
}

std::string HttpTarget::Describe() const {
  return fmt::format("{} (model {}, {})", options_.endpoint.Url(), options_.model,
                     options_.chat ? "chat completions" : "completions with token-id prompts");
}

}  // namespace goodput
