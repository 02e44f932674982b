// Any OpenAI-compatible server as a measurement Target: each run is the
// load generator's (client/load_client.h) with the repetition's seed.
#pragma once

#include <string>

#include "client/load_client.h"
#include "core/clock.h"
#include "measure/target.h"

namespace goodput {

class HttpTarget final : public Target {
 public:
  // Every run salts its prompts anew (LoadOptions::prompt_salt): each starts
  // from a cold prefix cache, also against a server an earlier command used.
  explicit HttpTarget(client::LoadOptions options);
  Result<MeasuredRun> Run(const Workload& workload, const ArrivalSpec& load, int repetition) override;
  // "http://127.0.0.1:8000/v1 (model m, completions with token-id prompts)".
  std::string Describe() const override;
  std::string ServedUrl() const override { return options_.endpoint.Url(); }

 private:
  client::LoadOptions options_;
  RealClock clock_;
  uint64_t runs_ = 0;
};

}  // namespace goodput
