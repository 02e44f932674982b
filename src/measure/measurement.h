// The measurement every command runs, written once against Target: one load
// point (the workload run `repeat` times, summarised), a ladder of points or
// the capacity search, and all of it once per value of a varied engine flag
// (--vary). `goodput sim`, `bench`, `sweep` and `capacity` differ only in the
// targets they build and what they do with each point.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "measure/ladder.h"
#include "measure/point.h"
#include "measure/target.h"

namespace goodput {

// Reports "repetition i of n" before each run; may be empty.
using RepetitionProgress = std::function<void(int, int)>;

// How many times a point runs: at least `min`; then, while its verdict is
// undecided (an interval straddles a class's required attainment), one more
// run at a time up to `max`.
struct Repetitions {
  int min = 1;
  int max = 1;
};

// Runs `load` (repetitions 1, 2, ...) and summarises it. `runs`, when given,
// receives every repetition's run (for the ledger). `stop`, when given and
// true between repetitions, ends the point with an "interrupted" error.
Result<PointResult> MeasurePoint(Target& target, const Workload& workload, const ArrivalSpec& load,
                                 Repetitions repetitions, const RepetitionProgress& progress = {},
                                 std::vector<MeasuredRun>* runs = nullptr, const std::function<bool()>& stop = {});

// One engine flag and the values to run it at: "max-num-seqs=8,16,32".
struct Vary {
  std::string flag;  // without the leading dashes
  std::vector<std::string> values;
};
// Errors: no '=', an empty flag or an empty value, each named.
Result<Vary> ParseVary(const std::string& text);

// One setting of a measurement: nothing varied (flag empty), or flag=value.
struct Setting {
  std::string flag, value;
  std::string Label() const;  // "" or "max-num-seqs=16"
};

struct MeasurementSpec {
  Workload workload;
  std::vector<ArrivalSpec> loads;  // the ladder; a capacity search from one load doubles and bisects,
  bool search_capacity = false;    // over several walks them up to the first that does not hold
  double max_load = 0;             // capacity search only (see RunCapacitySearch)
  int repeat = 1;                  // runs per load, at least
  int max_repeat = 0;              // while undecided, more runs up to this (0: repeat)
  std::optional<Vary> vary;
};

// Builds the target for one setting (for a varied flag: the engine started
// or configured with flag=value).
using TargetFactory = std::function<Result<std::unique_ptr<Target>>(const Setting&)>;

struct MeasurementHooks {
  std::function<void(const std::string&)> progress;  // a line before each repetition; may be empty
  // Each measured point with its runs (the ledger records them); an error
  // ends the measurement. May be empty.
  std::function<Status(const Setting&, const PointResult&, const std::vector<MeasuredRun>&)> on_point;
  std::function<bool()> stop;  // true: end with an "interrupted" error; may be empty
};

struct SettingResult {
  std::string setting;      // Setting::Label()
  std::string target;       // Target::Describe()
  std::string kv_capacity;  // Target::KvCapacityLines()
  SweepResult sweep;
};

// Whether `spec` can be measured: loads given, repeat >= 1 (max_repeat 0 or
// at least repeat), every closed-loop load with at least twice its clients
// in requests per run. The error says what to change.
Status CheckMeasurementSpec(const MeasurementSpec& spec);

// Measures every setting in turn (one target each, released before the
// next is built). Errors: a spec CheckMeasurementSpec refuses, a target that
// cannot be built or run, a hook's error, or the stop hook.
Result<std::vector<SettingResult>> Measure(const MeasurementSpec& spec, const TargetFactory& make_target,
                                           const MeasurementHooks& hooks = {});

}  // namespace goodput
