// The simulator as a measurement Target: each run is Simulate() on the
// deployment a SimSetup describes, with the repetition's seed.
#pragma once

#include <memory>
#include <string>

#include "measure/target.h"
#include "sim/setup.h"

namespace goodput {

class SimTarget final : public Target {
 public:
  // `describe` names the GPU, model and engine settings for people.
  SimTarget(SimSetup setup, std::string describe) : setup_(std::move(setup)), describe_(std::move(describe)) {}
  Result<MeasuredRun> Run(const Workload& workload, const ArrivalSpec& load, int repetition) override;
  std::string Describe() const override { return describe_; }
  // The planned pool's "GPU KV cache size" and "Maximum concurrency" lines.
  std::string KvCapacityLines() const override;

 private:
  SimSetup setup_;
  std::string describe_;
};

}  // namespace goodput
