// What the measuring commands (`sim`, `bench`, `sweep`, `capacity`) share:
// the workload, SLO, load, repetition and --vary flags and their parsing into
// a MeasurementSpec; progress lines; the command line as typed.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "core/status.h"
#include "measure/measurement.h"

namespace goodput {

struct MeasurementArgs {
  std::string workload, slo, concurrency, rate;
  std::vector<std::string> vary;     // each FLAG=V1,V2; several form a grid
  std::optional<double> burstiness;  // none: the workload's arrival shape
  double max_load = 0;   // capacity search: 0 = 4096 clients or 1000 req/s
  int repeat = 1;        // runs per load (the command sets its default before registering)
  int max_repeat = 0;    // while undecided, runs up to this (0: 3 x repeat)
  int64_t requests = 0;  // 0: the workload's
  bool json = false;
};

// How the command uses the loads: one point (bench), a ladder (sweep, sim)
// and/or a capacity search (capacity, sim capacity).
struct LoadUse {
  bool ladder = true;
  bool capacity = false;
  bool vary = true;  // takes --vary (tune searches settings its own way)
};

// Registers the flags with their help; `a.repeat` holds the command's default.
void AddMeasurementFlags(CLI::App& app, MeasurementArgs& a, LoadUse use);

// The workload (with --slo and --requests applied), the loads, repetitions
// and the varied flag. Errors name the flag; a one-point command given
// several loads is an error.
Result<MeasurementSpec> ToMeasurementSpec(const MeasurementArgs& a, LoadUse use, bool search_capacity);

// SIGINT, SIGTERM and SIGHUP while a measurement runs: the first is noted
// (Interrupted() turns true: requests in flight are abandoned and the
// command ends what it measured as interrupted); a second ends the process
// at once (servers it started follow: they have a death signal).
void CatchStopSignals();
void ReleaseStopSignals();
bool Interrupted();
int StopSignal();  // the signal that interrupted, 0 when none

// A progress line on stderr when it is a terminal (pipes and logs stay
// clean); "" clears it.
void Progress(const std::string& what);

// The command line as typed (main records it; the ledger stores it).
void SetCommandLine(int argc, char** argv);
const std::string& CommandLine();

}  // namespace goodput
