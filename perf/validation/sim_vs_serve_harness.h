// The proof that the simulator can be trusted for the CPU engine: the same
// workload, loads and engine settings measured on goodput serve over real
// HTTP and on the simulator calibrated from goodput serve's own steps, side
// by side, with the error of every figure.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "calibrate/calibration.h"
#include "core/status.h"
#include "measure/measurement.h"
#include "server/serving.h"
#include "workload/router.h"

namespace goodput {

struct Comparison {
  struct Row {
    PointResult serve, sim;
    // Each repetition alone, in order: repetition i draws the same requests
    // on both sides (the workload's seed for repetition i).
    std::vector<PointResult> serve_runs, sim_runs;
    // The calibration the simulator ran this load with.
    double fit_rms_log_error = 0;
    int64_t fit_steps = 0;
    // The simulator fitted to this load's own steps (CompareSimToServeHeldOut):
    // the cost model's own error, without the machine's drift between the
    // minutes of one load and the others'. Not a prediction.
    std::optional<PointResult> sim_in_sample;
    // The simulator with one calibration from every load's steps
    // (HeldOutComparison::all_steps): what `goodput calibrate steps
    // --from-step-log` over a whole served session gives a user. In sample
    // too, but one fit for all the loads.
    std::optional<PointResult> sim_every_step;
    // goodput serve again, every repetition of the same requests on a fresh
    // engine process, after the last pass (HeldOutOptions::rerun_serve):
    // what rerunning the real engine gives, to set beside the simulator's
    // prediction of the same figures.
    std::optional<PointResult> serve_rerun;
  };
  std::string workload;
  std::vector<Row> rows;  // by load
  std::optional<std::string> serve_capacity, sim_capacity;  // labels; empty: none
  int capacity_steps_apart = 0;  // ladder steps between the two capacities
  // Each side's capacity line with why the next load does not hold
  // (FormatCapacity), shown when the capacities differ.
  std::string serve_capacity_why, sim_capacity_why;
};

// One case of a comparison: a workload's ladder (`spec`, not a search) on
// goodput serve with `config`'s engine settings; with `replicas` > 1, on that
// many goodput serve processes at once, the client routing each request by
// `router` (bench --target URL1,URL2,...), against the simulator's fleet of
// as many instances behind the same router (sim --replicas --router).
struct ComparisonCase {
  server::ServeConfig config;
  MeasurementSpec spec;
  int replicas = 1;
  RouterPolicy router = RouterPolicy::kRoundRobin;
};

struct HeldOutComparison {
  std::vector<Comparison> cases;  // in the order given
  // Fitted to the steps of every load of every case: its residuals show
  // where the cost model misses. Only Row::sim_every_step runs with it.
  Calibration all_steps;
};

struct HeldOutOptions {
  // Where the step logs go ("caseN-WORKLOAD-load-LOAD-run-R.log", and
  // "...-rerun-R.log" for the rerun; "-replica-J" before ".log" for each
  // process of a fleet), created if need be and kept, to refit; empty:
  // temporary files, removed.
  std::string step_log_dir;
  // Runs goodput serve's passes a second time after the first, on the same
  // requests (Comparison::Row::serve_rerun). Its steps are not fitted.
  bool rerun_serve = false;
  // The ledger (an SQLite file) goodput serve's runs are kept in, beside the
  // step logs: one ledger run per case and round ("sim_vs_serve: goodput
  // serve, case K (WORKLOAD), run|rerun"), each load a point with its
  // repetitions and requests; empty: not kept. With the step logs it is all
  // ReplaySimToServeHeldOut needs.
  std::string serve_ledger;
};

// Requests a run so that `repeat` runs pooled measure enough for a p99's 95%
// interval to close (368 requests): with fewer, a p99 is the worst one or two
// requests, and a simulator without the engine's rare slow steps falls short
// of it one-sidedly (TTFT p99 14-26% low at 2-8 clients over 102 requests;
// +6% and +8% at 2 and 4 clients over 384, fitted to the same run's steps).
// The warm-up is the workload's share or the first wave of `clients`
// requests (closed loop; 0 in open loop), whichever ends later (measure/run.cc).
int64_t RequestsToBoundP99(const Workload& w, int repeat, int clients);

// Measures every load of every case on goodput serve over real HTTP, each
// repetition on its own engine process logging its steps (--step-log), in
// passes: pass r runs repetition r of every load of every case, so that the
// machine's slow spells fall on every load alike. Then predicts each load on
// the simulator calibrated from the steps of every other load of every case:
// leave one load out (and, apart, runs it fitted to its own steps and to
// every load's: Comparison::Row::sim_in_sample, sim_every_step). No
// held-out figure is judged on the steps it was fitted to, and the fit is
// taken from the same minutes of the same machine as the figures it
// predicts (a calibration run minutes apart drifts with a shared machine's
// load). Each load runs exactly `spec.repeat` repetitions
// on both sides (none added while a verdict is undecided). The cases must
// share one model. Each row's fit is reported (Comparison::Row::fit_*).
// `progress` is told each run and fit.
Result<HeldOutComparison> CompareSimToServeHeldOut(const std::string& goodput_binary,
                                                   const std::vector<ComparisonCase>& cases,
                                                   const std::function<void(const std::string&)>& progress = {},
                                                   const HeldOutOptions& options = {});

// CompareSimToServeHeldOut without running goodput serve: its side as an
// earlier comparison of the same `cases` kept it (`options.serve_ledger`,
// and `options.step_log_dir`'s logs; `options.rerun_serve` when that one
// reran), the simulator's side fitted and run again. A change to the cost
// model or its fit is judged against the same measurements in minutes
// instead of the hour the engine's runs take. Errors: either is missing, or
// a kept run's loads, requests or repetitions are not the case's.
Result<HeldOutComparison> ReplaySimToServeHeldOut(const std::vector<ComparisonCase>& cases,
                                                  const std::function<void(const std::string&)>& progress,
                                                  const HeldOutOptions& options);

// Measures `spec` (its ladder, not a search; each repetition on its own
// engine process, in passes, as above) on goodput serve started from
// `goodput_binary` with `config`'s engine settings, and on the simulator
// with the same settings and one given `calibration`. `progress` is told
// each run.
Result<Comparison> CompareSimToServe(const std::string& goodput_binary, const server::ServeConfig& config,
                                     const Calibration& calibration, const MeasurementSpec& spec,
                                     const std::function<void(const std::string&)>& progress = {});

// The targets a predicted figure is held to (sim_vs_serve's, from issue 10):
// TTFT and TPOT p50 within 10% of the measured, p99 within 15%, throughput
// within 5%.
struct FigureScore {
  int met = 0, total = 0;
  int percentile_misses = 0;
  int unresolved = 0;  // of those, inside the measured side's own 95% interval of that percentile
  FigureScore& operator+=(const FigureScore& o) {
    met += o.met, total += o.total, percentile_misses += o.percentile_misses, unresolved += o.unresolved;
    return *this;
  }
};
// Adds `predicted`'s five figures (TTFT p50/p99, TPOT p50/p99, throughput)
// judged against `measured`'s to `score`. A figure either side lacks misses.
void ScoreFigures(const PointResult& predicted, const PointResult& measured, FigureScore& score);

// Which of a row's simulator runs a score judges.
enum class SimulatorFit {
  kHeldOut,    // Row::sim: fitted to every other load's steps
  kOwnSteps,   // Row::sim_in_sample
  kEveryStep,  // Row::sim_every_step
};

// Every load's figures: the `fit` simulator's against goodput serve's (rows
// without that run count nothing).
FigureScore ScoreSimulator(const Comparison& c, SimulatorFit fit = SimulatorFit::kHeldOut);

// goodput serve's rerun of the same requests (Row::serve_rerun) as the
// prediction of its first run's figures, at the sample the simulator's are
// judged on: how far the real engine's figures move from one run to the
// next. (A perfect prediction of the engine's mean would carry one run's
// noise; the rerun carries two runs'.) Rows without a rerun count nothing.
FigureScore ScoreRerun(const Comparison& c);

// Loads whose prefix-cache hit rate the simulator gets within `points`
// percentage points of goodput serve's; loads where goodput serve's side saw
// no prefix-cache lookup count nothing.
FigureScore ScoreHitRates(const Comparison& c, double points = 5);

// The noise floor of those targets, at each repetition's sample: every
// repetition of goodput serve predicted by another repetition's figures —
// of goodput serve itself (`by_sim` false: the same engine a pass apart,
// another draw of requests) or of the simulator (`by_sim` true: the same
// other draw of requests). A figure the engine cannot reproduce from one
// repetition to the next cannot be asked of the simulator either. Loads
// with fewer than two repetitions count nothing.
FigureScore ScoreRepetitions(const Comparison& c, bool by_sim);

// The figures side by side with the simulator's error (sim / serve - 1) for
// TTFT p50/p99, TPOT p50/p99 and throughput, and the two capacities.
std::string FormatComparison(const Comparison& c);

}  // namespace goodput
