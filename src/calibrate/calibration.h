// A calibration: the cost model's factors fitted to measurements, with the
// hardware they describe and how well they fit, kept in a versioned JSON
// file that `goodput sim --calibration FILE` and `--target sim:...` read.
// Two sources (goodput calibrate): goodput serve's own steps on this CPU (the
// CPU engine becomes a hardware the simulator can model), or a ledger run of
// any target (TTFT/TPOT at several loads, fitted through the simulator).
#pragma once

#include <string>
#include <vector>

#include "calibrate/loop_fit.h"
#include "core/status.h"
#include "hw/cost_model.h"
#include "hw/fit.h"
#include "hw/hardware.h"

namespace goodput {

struct Calibration {
  static constexpr int kVersion = 1;
  std::string source;        // how it was measured, for people
  std::string model;         // the model it was measured with
  // The weights' format it was measured with (the peak_flops below is that
  // format's); empty in files written before it was kept.
  std::string weight_precision;
  HardwareSpec hardware;     // peaks as the factors refer to them
  CostFactors factors;       // peak_flops and bandwidth included
  std::vector<FitResidual> residuals;
  double rms_log_error = 0;  // sqrt(mean(log(modeled / measured)^2)) over the fitted measurements
  int64_t measurements = 0;  // fitted (residuals may group them by shape, and a step log's cover every step)
  // The fit stopped on its evaluation budget rather than converging (a
  // ledger's or published figures' fit; not kept in the file).
  bool stopped_at_budget = false;
  // goodput serve's loop around its steps, from timed step logs (else not
  // measured: the simulator's defaults).
  EngineLoopFit engine_loop;
};

// The JSON text of `c` (pretty enough to read and diff).
std::string CalibrationToJson(const Calibration& c);

// Parses a calibration; errors name the file and the field. A file of a
// newer version is refused.
Result<Calibration> ParseCalibration(const std::string& text, const std::string& where);
Result<Calibration> LoadCalibration(const std::string& path);

// Writes `c` to `path` through a temporary file (nothing half-written).
Status SaveCalibration(const Calibration& c, const std::string& path);

// The residuals' table for people, worst last; then the engine's loop when
// it was measured.
std::string FormatResiduals(const Calibration& c);
// The engine's loop for people, one line per time; empty when not measured.
std::string FormatEngineLoop(const EngineLoopFit& f);

}  // namespace goodput
