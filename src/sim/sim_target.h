// The simulator as a measurement Target: each run is Simulate() on the
// deployment a SimSetup describes, with the repetition's seed.
#pragma once

#include <memory>
#include <string>

#include "measure/target.h"
#include "sim/setup.h"

namespace goodput {

// One simulated run measured as a Target's run is: records with their token
// times (for ITL and the window's token count), the measurement window and
// the engine's counts; `repetition` (1 for the first) seeds it.
Result<MeasuredRun> SimulateMeasuredRun(const Workload& workload, const ArrivalSpec& load, int repetition,
                                        SimOptions options, const CostModel& cost);

// How a simulator target describes itself, beside every figure and in the
// ledger: `where` (the card, or a calibration file) and the deployment —
// model, GPUs (per replica under data parallelism), formats, the pool, the
// sequence cap, the policy and the engine's front end — then `flags` as given.
std::string DescribeSimTarget(const SimSetup& setup, const std::string& where, const std::string& flags);

class SimTarget final : public Target {
 public:
  // `describe` names the GPU, model and engine settings for people.
  SimTarget(SimSetup setup, std::string describe) : setup_(std::move(setup)), describe_(std::move(describe)) {}
  Result<MeasuredRun> Run(const Workload& workload, const ArrivalSpec& load, int repetition) override;
  std::string Describe() const override { return describe_; }
  // The planned pool's "GPU KV cache size" and "Maximum concurrency" lines.
  std::string StartupLines() const override;
  // The plan's memory outside what the engine requested (Plan::headroom).
  std::optional<int64_t> MemoryHeadroomBytes() const override { return setup_.plan.headroom; }

 private:
  SimSetup setup_;
  std::string describe_;
};

}  // namespace goodput
