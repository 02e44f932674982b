// The cost model fitted to measured engine steps: each step's requests (what
// they computed) and its duration. Used for goodput serve's own steps (the
// CPU engine), whose peaks are not known beforehand: the fit finds the
// effective bandwidth, the matmul rate by tokens per step (small steps run
// far below the best rate), the per-step and per-request costs and how far
// compute and memory overlap.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "calibrate/calibration.h"
#include "core/status.h"
#include "engine/step_log.h"
#include "hw/cost_model.h"

namespace goodput {

struct MeasuredStep {
  std::string shape;  // "decode 8 x ctx 512", "prefill 256"
  std::vector<StepRequest> requests;
  double seconds = 0;
  double weight = 1;  // its squared log error counts this much in the fit
};

// Fits factors for `model` to `steps` (at least as many steps as the fit has
// parameters). The result's factors have peak_flops = the best fitted matmul
// rate and bandwidth = the fitted effective bandwidth, so efficiencies are
// relative to them; residuals list every step. The efficiency curves (matmul
// by tokens per step, attention by a request's new tokens) have knots at
// 1, 4, 16, ... tokens within what the steps reach and at its ends, and are
// constant past the longest step: the fit does not extrapolate a trend.
Result<Calibration> FitSteps(const DeployedModel& model, const std::vector<MeasuredStep>& steps);

// One row per shape of `steps` (in order of first appearance): the mean
// measured time and the mean time `factors` model, "(N steps)" when N > 1.
std::vector<FitResidual> ShapeResiduals(const DeployedModel& model, const CostFactors& factors,
                                        const std::vector<MeasuredStep>& steps);

}  // namespace goodput
