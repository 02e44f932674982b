// The cost model fitted to measured engine steps: each step's requests (what
// they computed) and its duration. Used for goodput serve's own steps (the
// CPU engine), whose peaks are not known beforehand: the fit finds the
// effective bandwidth, the matmul rate by tokens per step (small steps run
// far below the best rate), the per-step and per-request costs and how far
// compute and memory overlap. `goodput calibrate steps` fits a grid of steps
// (or a served step log) with it for the simulator, and goodput serve a
// smaller grid at start-up for the slo policy's step-time prior: one form,
// the simulator's.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"
#include "cpu/cpu_engine.h"
#include "engine/step_log.h"
#include "hw/cost_model.h"
#include "hw/fit.h"

namespace goodput::cpu {

struct MeasuredStep {
  std::string shape;  // "decode 8 x ctx 512", "prefill 256"
  std::vector<StepRequest> requests;
  double seconds = 0;
  double weight = 1;  // its squared log error counts this much in the fit
};

// Where the efficiency curves may bend: the matmul rate by a step's tokens,
// the attention rate by a request's new tokens. Only the knots well inside
// the range the steps reach are fitted, beside the range's ends.
struct StepFitKnots {
  // The pairs 8|9 and 64|65 let the rate jump where the CPU engine hands its
  // matmuls from its own small-batch kernel to OpenBLAS (SmallMatMulHandles:
  // up to 8 rows with AVX2, 64 with AVX-512); on perf/sim_vs_serve's step
  // logs of two runs they took the fit's rms log error from 0.152 to 0.135
  // and 0.143 to 0.129, and decodes of 33-64 requests from 28% and 15% slow
  // to 8% and 0%.
  std::vector<double> matmul = {1, 4, 8, 9, 16, 64, 65, 256, 1024};
  std::vector<double> attention = {1, 16, 256};
};

struct StepFit {
  // peak_flops = the best fitted matmul rate and bandwidth = the fitted
  // effective bandwidth, so efficiencies are relative to them.
  CostFactors factors;
  std::vector<FitResidual> residuals;  // ShapeResiduals of the fitted steps
  double rms_log_error = 0;            // sqrt(mean(log(modeled / measured)^2))
  int64_t measurements = 0;
};

// Fits factors for `model` to `steps` (at least as many steps as the fit has
// parameters). The efficiency curves have knots at `knots` within what the
// steps reach and at its ends, and are constant past the longest step: the
// fit does not extrapolate a trend.
Result<StepFit> FitSteps(const DeployedModel& model, const std::vector<MeasuredStep>& steps,
                         const StepFitKnots& knots = {});

// One row per shape of `steps` (in order of first appearance): the mean
// measured time and the mean time `factors` model, "(N steps)" when N > 1.
std::vector<FitResidual> ShapeResiduals(const DeployedModel& model, const CostFactors& factors,
                                        const std::vector<MeasuredStep>& steps);

// The CPU engine as the cost model sees it (its weights and KV bytes as the
// planner counts them; int8 KV as one byte a value).
Result<DeployedModel> DeployedCpuModel(const CpuEngine& engine);

}  // namespace goodput::cpu
