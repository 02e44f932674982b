// How long a CPU engine step takes, for the `slo` scheduling policy: a line
// fitted at start-up to steps the runner actually executes, so the scheduler
// can tell whether adding offline work to a step keeps the interactive TPOT
// target. (The simulator's CostModelRunner plays this role for GPUs.)
#pragma once

#include <cstdint>
#include <vector>

#include "core/clock.h"
#include "core/status.h"
#include "engine/kv_cache_manager.h"
#include "engine/scheduler.h"
#include "engine/step.h"

namespace goodput::cpu {

// seconds = fixed + per_token * tokens + per_attended * sum(new * (computed + new / 2)).
// `fixed` is mostly reading every weight once; `per_token` the matmul work of
// one more row; `per_attended` attention over the KV a new token reads.
struct CpuStepCoefficients {
  double fixed_s = 0;
  double per_token_s = 0;
  double per_attended_s = 0;
};

// One measured step: its tokens, its attended KV entries (as above) and time.
struct StepSample {
  double tokens = 0;
  double attended = 0;
  double seconds = 0;
};

// Steps measured on throwaway requests, and the line through them.
struct CpuStepCalibration {
  StepSample decode1;       // median decode step, batch 1
  StepSample decode_batch;  // median decode step, batch kCalibrationBatch
  StepSample prefill;       // median kCalibrationPrefill-token prefill step
  CpuStepCoefficients fit;
};
constexpr int64_t kCalibrationBatch = 16;
constexpr int64_t kCalibrationPrefill = 256;

// A request for timing steps: `prompt` token ids of its own (valid in every
// vocabulary) and `max_tokens` outputs past any EOS.
Request StepTimingRequest(RequestId id, int64_t prompt, int64_t max_tokens);

// Solves for the line through three steps of different shapes (a decode at
// batch 1, a wider decode, a prefill). A coefficient the noise drives below
// zero is clamped at zero.
CpuStepCoefficients FitCpuStepCoefficients(const StepSample& decode1, const StepSample& decode_batch,
                                           const StepSample& prefill);

// Runs the measurements on `runner` through a scratch scheduler over a
// `num_blocks` pool of `groups`. The runner's KV contents are overwritten:
// call it before the engine serves. Fails if the pool cannot hold the
// calibration requests.
Result<CpuStepCalibration> CalibrateCpuSteps(ModelRunner& runner, const std::vector<KvGroupSpec>& groups,
                                             int64_t num_blocks, int64_t block_size, const Clock& clock);

// The start-up line is only the prior: every step that ran is compared with
// it, and predictions are scaled by what the steps actually take here and now
// (a neighbour taking a core doubles them; the line, fitted once, would not
// know). The scale follows the log of actual / predicted, averaged over about
// the last ten steps, plus its mean deviation: a step is predicted near the
// upper side of what recent steps took, not their middle. One stalled step
// moves it little (each ratio is clipped to 1/8 .. 8).
class CpuStepTimePredictor final : public StepTimePredictor {
 public:
  explicit CpuStepTimePredictor(CpuStepCoefficients c) : c_(c) {}
  void Begin() override { tokens_ = attended_ = 0; }
  void Add(int64_t num_computed, int64_t num_new, bool samples) override;
  double SecondsWith(int64_t num_computed, int64_t num_new, bool samples) const override;

  // A step of `plan` took `seconds` (on the engine thread, between steps).
  void Observe(const StepPlan& plan, double seconds);
  // What predictions are multiplied by now (1 before any step was observed).
  double scale() const { return scale_; }

 private:
  double Line(double tokens, double attended) const;

  CpuStepCoefficients c_;
  double tokens_ = 0, attended_ = 0;
  double log_ratio_ = 0, log_deviation_ = 0, scale_ = 1;
};

}  // namespace goodput::cpu
