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
  // Judge the pooled runs after each one and stop once the verdict is
  // decided, before `min` (a capacity search needs each load's verdict, not
  // the spread of its repetitions: 1,800 requests for a 7-step search was 5
  // runs a load where most loads were decided after one).
  bool sequential = false;
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

// One setting of a measurement: the engine flags it changes (none for the
// engine as configured), in the order given.
struct Setting {
  struct Flag {
    std::string name;  // without the leading dashes: "max-num-seqs"
    std::string value;
  };
  std::vector<Flag> flags;

  bool empty() const { return flags.empty(); }
  // "" or "max-num-seqs=16" or "max-num-seqs=16, kv-cache-dtype=fp8".
  std::string Label() const;
  // {"--max-num-seqs", "16", ...}: to append to an engine's command line.
  std::vector<std::string> Args() const;
  // The value of `name`, or nullptr when the setting does not change it.
  const std::string* Find(const std::string& name) const;
};

// Every combination of the varied flags' values, the first flag's values
// outermost: {a=1,2} x {b=x,y} -> a=1,b=x; a=1,b=y; a=2,b=x; a=2,b=y. No
// flag: one empty setting. Errors: a flag varied twice.
Result<std::vector<Setting>> SettingGrid(const std::vector<Vary>& varied);

struct MeasurementSpec {
  Workload workload;
  std::vector<ArrivalSpec> loads;  // the ladder; a capacity search from one load doubles and bisects,
  bool search_capacity = false;    // over several walks them up to the first that does not hold
  CapacitySearchOptions capacity;  // a capacity search from one load: its start, maximum and resolution
  int repeat = 1;                  // runs per load, at least
  int max_repeat = 0;              // while undecided, more runs up to this (0: repeat)
  std::vector<Vary> vary;          // the settings: every combination of these flags' values (none: one)
};

// Builds the target for one setting (the engine started or configured with
// the setting's flags).
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
  std::string startup_lines;  // Target::StartupLines()
  std::optional<int64_t> memory_headroom;  // Target::MemoryHeadroomBytes()
  SweepResult sweep;
};

// Whether `spec` can be measured: loads given, repeat >= 1 (max_repeat 0 or
// at least repeat), every closed-loop load with at least twice its clients
// in requests per run, no flag varied twice. The error says what to change.
Status CheckMeasurementSpec(const MeasurementSpec& spec);

// Measures every setting of the grid in turn (one target each, released
// before the next is built). Errors: a spec CheckMeasurementSpec refuses, a
// target that cannot be built or run, a hook's error, or the stop hook.
Result<std::vector<SettingResult>> Measure(const MeasurementSpec& spec, const TargetFactory& make_target,
                                           const MeasurementHooks& hooks = {});

}  // namespace goodput
