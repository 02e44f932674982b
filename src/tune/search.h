// The search over a SearchSpace, each setting scored by a capacity search
// (measure/ranking.h). A grid no larger than the budget is measured whole.
// A larger one is searched by coordinate descent with successive halving:
// from a starting setting, each flag in turn is tried at every other value
// with the rest held, those candidates are screened (a cheap capacity search:
// one run per load, a coarse bisection), the best `promote` of them are
// measured in full, and the search moves when one ranks above where it
// stands; rounds over every flag repeat until one moves nothing or the
// budget is spent.
//
// Why this and not NLopt (already a dependency) or a Bayesian optimiser:
// the objective is a step function of integer and categorical flags
// (capacity is a whole number of clients, found by bisection), on which
// NLopt's derivative-free methods see flat plateaus and no Debian package
// offers a mixed-integer Bayesian optimiser. Along one flag the capacity
// moves in the ways the source documents describe (a sequence cap that
// queues requests, a KV pool that fills, a chunk that stalls decodes), so
// lines of one flag find the interlocks; screening spends full capacity
// searches only on settings that were competitive cheaply.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "core/status.h"
#include "measure/measurement.h"
#include "measure/ranking.h"
#include "tune/space.h"

namespace goodput {

enum class Fidelity { kScreen, kFull };
const char* FidelityName(Fidelity f);  // "screen", "full"

struct Evaluation {
  Setting setting;
  Fidelity fidelity = Fidelity::kFull;
  std::string pruned;    // non-empty: why the setting cannot run (nothing was measured)
  SettingResult result;  // its capacity search
  SettingScore score;
  bool runs() const { return pruned.empty(); }
};

// Measures one setting at a fidelity. A setting that cannot run comes back
// with `pruned` set; an error ends the search.
using Evaluator = std::function<Result<Evaluation>(const Setting&, Fidelity)>;

struct SearchOptions {
  int budget = 60;            // evaluations at most (screening and full alike)
  std::vector<size_t> start;  // coordinate descent's first setting (per dimension; empty: StartIndices)
  int promote = 2;            // per line, how many screened settings are measured in full
  RankTolerance tolerance;
  // After each evaluation: it, how many ran so far and the budget. May be empty.
  std::function<void(const Evaluation&, int, int)> progress;
};

struct SearchResult {
  std::string method;                     // how the space was searched, for people
  std::vector<Evaluation> evaluations;    // every one, in the order run
  std::vector<size_t> ranked;             // the full evaluations that ran, best first (indices into evaluations)
  std::vector<RankCriterion> above_next;  // per ranked setting: what put it above the next
  bool budget_spent = false;              // the search stopped at its budget before converging
};

// The middle value of each range and the first of each list (a list's first
// is the engine's own: auto, 0).
std::vector<size_t> StartIndices(const SearchSpace& space);

// Searches `space` as above. Errors: the evaluator's.
Result<SearchResult> SearchSettings(const SearchSpace& space, const Evaluator& evaluate,
                                    const SearchOptions& options = {});

// Ranks evaluations that ran (RankScores over their scores); `indices` into
// `evaluations`. Settings that did not run are left out.
void RankEvaluations(const std::vector<Evaluation>& evaluations, const std::vector<size_t>& indices,
                     const RankTolerance& tolerance, std::vector<size_t>& ranked,
                     std::vector<RankCriterion>& above_next);

}  // namespace goodput
