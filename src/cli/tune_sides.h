// The two sides `goodput tune` works with, built from its flags: the
// simulator it searches on (a catalog card or calibration file, or goodput
// serve's engine fitted to its own logged steps) and the real target it
// confirms on (goodput serve started per setting, a server started per
// setting by --launch, or none when the target is the simulator), with the
// refits --recalibrate asks for.
#pragma once

#include <string>

#include "cli/target_flags.h"
#include "core/status.h"
#include "tune/tune.h"

namespace goodput {

struct TuneSideArgs {
  TargetArgs t;           // the real target (--target and its flags)
  std::string sim;        // --sim: sim:GPU | sim:FILE; "" = the target itself (sim:) or a fit of goodput serve
  std::string sim_model;  // --sim-model; "" = --model
  std::string sim_args;   // --sim-args: goodput sim's flags for the simulator only; "" = --engine-args
  std::string work_dir;   // step logs and fitted calibrations go here
  bool confirm = true;    // measure the top settings on the target
  bool recalibrate = false;
};

// The simulator and target factories and the fits the flags ask for. For
// --target embedded without --sim the simulator is fitted to the baseline's
// logged steps (fit_before_search); --recalibrate refits it to every
// confirmation's steps; on other targets it fits the simulator to every
// load the target measured (`workload`, as it ran). Errors: flag
// combinations that cannot work (a URL without --sim, --recalibrate on a
// simulator target).
Result<TuneSides> MakeTuneSides(const TuneSideArgs& a, const Workload& workload);

// The engine's own values of the flags a space may name, as the engine
// resolves them (vLLM's defaults for the simulated card; goodput serve's on
// this CPU), with --engine-args applied: a setting that changes fewer of
// them ranks first among equals.
Result<Setting> EngineDefaults(const TuneSideArgs& a);

// The space searched when --space is not given, for the kind of target:
// goodput serve's knobs for embedded, vLLM's (batch cap, chunk size, memory
// share, KV format) otherwise.
std::string DefaultSpace(TargetKind kind);

}  // namespace goodput
