// The proof that the simulator can be trusted for the CPU engine: the same
// workload, loads and engine settings measured on goodput serve over real
// HTTP and on the simulator calibrated from goodput serve's own steps, side
// by side, with the error of every figure.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "calibrate/calibration.h"
#include "core/status.h"
#include "measure/measurement.h"
#include "server/serving.h"

namespace goodput {

struct Comparison {
  struct Row {
    PointResult serve, sim;
  };
  std::string workload;
  std::vector<Row> rows;  // by load
  std::optional<std::string> serve_capacity, sim_capacity;  // labels; empty: none
  int capacity_steps_apart = 0;  // ladder steps between the two capacities
  // Each side's capacity line with why the next load does not hold
  // (FormatCapacity), shown when the capacities differ.
  std::string serve_capacity_why, sim_capacity_why;
};

// A calibration run: a workload's ladder on goodput serve with an engine.
struct ServeRun {
  server::ServeConfig config;
  MeasurementSpec spec;
};

// Runs each of `runs` on goodput serve (started from `goodput_binary` with
// --step-log) and fits the cost model to the steps they took: the engine's
// steps as it served, mixed prefill and decode, with the load generator and
// the HTTP threads on the same cores. Use workload seeds the comparison does
// not, so that the comparison is not judged on the steps it was fitted to.
Result<Calibration> CalibrateFromServeRuns(const std::string& goodput_binary, const std::vector<ServeRun>& runs,
                                           const std::function<void(const std::string&)>& progress = {});

// Measures `spec` (its ladder, not a search) on goodput serve started from
// `goodput_binary` with `config`'s engine settings, and on the simulator
// with the same settings and `calibration`. `progress` is told each run.
Result<Comparison> CompareSimToServe(const std::string& goodput_binary, const server::ServeConfig& config,
                                     const Calibration& calibration, const MeasurementSpec& spec,
                                     const std::function<void(const std::string&)>& progress = {});

// The figures side by side with the simulator's error (sim / serve - 1) for
// TTFT p50/p99, TPOT p50/p99 and throughput, and the two capacities.
std::string FormatComparison(const Comparison& c);

}  // namespace goodput
