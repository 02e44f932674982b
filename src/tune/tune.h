// `goodput tune`: which combination of engine settings gives the most load
// under every class's SLO. The settings are searched on the simulator
// (tune/search.h); the simulator's top k are then measured on the real target
// by the same capacity search, beside the engine as configured (the
// baseline), and ranked again by what was measured. Settings that can change
// what the model answers have their answers compared with the baseline's.
// Optionally the simulator is fitted to what the target measured and the
// search's best re-ranked once. Written against Target factories: the
// simulator, goodput serve, a server started per setting, or (with no real
// target) the simulator alone.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "measure/measurement.h"
#include "measure/ranking.h"
#include "tune/output_diff.h"
#include "tune/search.h"
#include "tune/space.h"

namespace goodput {

// Whether `s` sets a flag that can change what the model answers (KV cache
// and weight formats, speculative decoding), not only how fast, to another
// value than `defaults` has (a flag `defaults` does not name counts).
bool ChangesNumerics(const Setting& s, const Setting& defaults = {});

// How many of `s`'s flags differ from `defaults` (a flag `defaults` does not
// name counts as changed); numbers and sizes compare by value ("0.90" is
// "0.9", "1GiB" is "1073741824").
int ChangedFlags(const Setting& s, const Setting& defaults);

struct TuneSpec {
  MeasurementSpec measurement;  // the workload, the one load capacity searches start from, repetitions
  SearchSpace space;
  Setting defaults;          // the engine's own values of the space's flags, where known (ranking's last criterion)
  std::string engine = "vllm";  // whose flags the paste lines spell (an engines catalog name: vllm, sglang, ...)
  SearchOptions search;      // the simulator's budget and the ranking's tolerances
  int top_k = 3;             // settings measured on the target
  bool recalibrate = false;  // fit the simulator to the target's runs and re-rank once
  double screen_resolution = 0.25;  // a screening capacity search's bisection (share)
  double full_resolution = 0.05;    // the simulator's full capacity search's
  double target_resolution = 0.1;   // the target's
};

// A setting as the target measured it.
struct Measured {
  Setting setting;
  bool baseline = false;  // the engine as configured, without the space's flags
  std::string failed;     // non-empty: the target could not run it (did not start), and why
  SettingResult result;   // its capacity search
  SettingScore score;
  std::optional<size_t> predicted;          // the simulator's full evaluation of it (index into search.evaluations)
  std::optional<OutputComparison> outputs;  // against the baseline's answers
  std::string outputs_note;                 // why outputs were not compared, when they were not
};

enum class Side { kSimulator, kTarget };

struct TuneSides {
  TargetFactory simulator;  // the search's; empty until `fit` gives one when fit_before_search
  TargetFactory target;     // the real target; empty: none (the simulator's ranking is the answer)
  // A simulator fitted to the target's runs so far; empty: cannot be refitted.
  std::function<Result<TargetFactory>(const std::vector<Measured>&)> fit;
  bool fit_before_search = false;  // the simulator comes from fitting the baseline's runs
  // While a measured setting's target is up: its answers, compared with the
  // baseline's (which the first call, for the baseline, keeps). Empty: not compared.
  std::function<Result<std::optional<OutputComparison>>(const Measured&, Target&)> check_outputs;
  std::function<void(const std::string&)> progress;  // a line per step; may be empty
  // Every measured point, with its side and fidelity (the ledger records them). May be empty.
  std::function<Status(Side, Fidelity, const Setting&, const PointResult&, const std::vector<MeasuredRun>&)> on_point;
  std::function<bool()> stop;  // true: end with an "interrupted" error; may be empty
};

struct TuneResult {
  std::string space;  // SearchSpace::Describe()
  SearchResult search;
  std::optional<Evaluation> baseline_simulated;  // the engine as configured, on the simulator
  std::vector<size_t> top;                       // the simulator's top k (indices into search.evaluations)
  std::vector<Measured> measured;                // the baseline first, then each setting confirmed
  std::vector<size_t> measured_ranked;           // indices into measured, best first (those that ran)
  std::vector<RankCriterion> measured_above_next;
  std::optional<SearchResult> refit;  // the search's best re-ranked by the refitted simulator
  // The answer: an index into measured (when confirmed) or into
  // search.evaluations (simulator only); the best whose outputs do not differ.
  std::optional<size_t> recommended;
  std::optional<size_t> best_but_outputs_differ;  // into measured: ranked above the recommendation
  bool confirmed = false;
  bool simulator_first_measured_best = true;  // the simulator's first is also the measured best
};

// Runs the whole tuning. Errors: the spec (one load, a space whose flags the
// simulator refuses), a simulator that cannot run, the hooks' errors, stop.
Result<TuneResult> Tune(const TuneSpec& spec, TuneSides sides);

}  // namespace goodput
