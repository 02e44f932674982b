// Scoring a comparison against the targets, and its table.
#include "sim_vs_serve_harness.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <tuple>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/stats.h"

namespace goodput {
namespace {

std::string Pct(double sim, double serve) {
  if (!std::isfinite(sim) || !std::isfinite(serve) || serve == 0) return "-";
  return fmt::format("{:+.0f}%", 100 * (sim / serve - 1));
}

bool Within(double predicted, double measured, double tolerance) {
  return std::isfinite(predicted) && std::isfinite(measured) && measured > 0 &&
         std::fabs(predicted / measured - 1) <= tolerance;
}

}  // namespace

void ScoreFigures(const PointResult& predicted, const PointResult& measured, FigureScore& score) {
  const PointResult &p = predicted, &m = measured;
  for (auto [guess, truth, interval, tolerance] : {std::tuple{p.ttft.p50, m.ttft.p50, m.ttft.p50_interval, 0.10},
                                                   {p.tpot.p50, m.tpot.p50, m.tpot.p50_interval, 0.10},
                                                   {p.ttft.p99, m.ttft.p99, m.ttft.p99_interval, 0.15},
                                                   {p.tpot.p99, m.tpot.p99, m.tpot.p99_interval, 0.15}}) {
    ++score.total;
    if (Within(guess, truth, tolerance)) {
      ++score.met;
      continue;
    }
    ++score.percentile_misses;
    score.unresolved += guess >= interval.lower && guess <= interval.upper;
  }
  ++score.total;
  score.met += Within(p.throughput, m.throughput, 0.05);
}

namespace {

// Row `r`'s simulator run with `fit`; null when the row has none.
const PointResult* SimulatorRun(const Comparison::Row& r, SimulatorFit fit) {
  const std::optional<PointResult>& other = fit == SimulatorFit::kOwnSteps ? r.sim_in_sample : r.sim_every_step;
  if (fit == SimulatorFit::kHeldOut) return &r.sim;
  return other ? &*other : nullptr;
}

}  // namespace

FigureScore ScoreSimulator(const Comparison& c, SimulatorFit fit) {
  FigureScore score;
  for (const Comparison::Row& r : c.rows) {
    if (const PointResult* sim = SimulatorRun(r, fit)) ScoreFigures(*sim, r.serve, score);
  }
  return score;
}

FigureScore ScoreRerun(const Comparison& c) {
  FigureScore score;
  for (const Comparison::Row& r : c.rows) {
    if (r.serve_rerun) ScoreFigures(*r.serve_rerun, r.serve, score);
  }
  return score;
}

FigureScore ScoreRepetitions(const Comparison& c, bool by_sim) {
  FigureScore score;
  for (const Comparison::Row& r : c.rows) {
    const std::vector<PointResult>& predictors = by_sim ? r.sim_runs : r.serve_runs;
    for (size_t measured = 0; measured < r.serve_runs.size(); ++measured) {
      for (size_t other = 0; other < predictors.size(); ++other) {
        if (other != measured) ScoreFigures(predictors[other], r.serve_runs[measured], score);
      }
    }
  }
  return score;
}

namespace {

// A p99 over fewer requests than bound it is the worst one or two of them:
// the line says which loads' p99s a reader should not hold to 15%.
std::string OpenP99Note(const Comparison& c) {
  const int64_t needed = MinSampleToBoundPercentile(99);
  std::vector<std::string> loads;
  int64_t most = 0;
  for (const auto& r : c.rows) {
    if (r.serve.ttft.count == 0 || r.serve.ttft.count >= needed) continue;
    loads.push_back(r.serve.label);
    most = std::max(most, r.serve.ttft.count);
  }
  if (loads.empty()) return "";
  return fmt::format("p99s of load {}: goodput serve measured {} requests or fewer, under the {} that bound a p99 at "
                     "95% (open above: the worst one or two requests)\n",
                     fmt::join(loads, ", "), most, needed);
}

// Per load of a fleet, or where either side's prefix cache found anything:
// both hit rates and their difference in points, and a fleet's busiest
// instance over the mean.
std::string FleetLines(const Comparison& c) {
  std::string s;
  for (const auto& r : c.rows) {
    if (!r.serve.prefix_cache || !r.sim.prefix_cache) continue;
    if (r.serve.replicas.empty() && r.serve.prefix_cache->hits == 0 && r.sim.prefix_cache->hits == 0) continue;
    const double serve = 100 * r.serve.prefix_cache->hit_rate(), sim = 100 * r.sim.prefix_cache->hit_rate();
    s += fmt::format("{:>6}  prefix-cache hit rate serve/sim {:.1f}%/{:.1f}% ({:+.1f} points)", r.serve.label, serve,
                     sim, sim - serve);
    if (!r.serve.replicas.empty()) {
      s += fmt::format("; busiest instance / mean serve/sim {:.2f}/{:.2f}", ReplicaImbalance(r.serve),
                       ReplicaImbalance(r.sim));
    }
    s += "\n";
  }
  return s;
}

}  // namespace

FigureScore ScoreHitRates(const Comparison& c, double points) {
  FigureScore score;
  for (const auto& r : c.rows) {
    if (!r.serve.prefix_cache || r.serve.prefix_cache->queries == 0) continue;
    ++score.total;
    score.met += r.sim.prefix_cache &&
                 std::fabs(r.sim.prefix_cache->hit_rate() - r.serve.prefix_cache->hit_rate()) <= points / 100;
  }
  return score;
}

std::string FormatComparison(const Comparison& c) {
  std::string s = fmt::format("workload {}: goodput serve (real HTTP) vs the simulator calibrated from its steps\n",
                              c.workload);
  // serve's own spread (max - min over its repeats, of the median) is the
  // noise floor the simulator's errors are read against.
  const bool in_sample =
      std::any_of(c.rows.begin(), c.rows.end(), [](const auto& r) { return r.sim_in_sample.has_value(); });
  const bool rerun = std::any_of(c.rows.begin(), c.rows.end(), [](const auto& r) { return r.serve_rerun.has_value(); });
  s += fmt::format("{:>6} {:>26} {:>26} {:>26} {:>26} {:>24} {:>13} {:>18}{}{}\n", "load", "TTFT p50 serve/sim/err",
                   "TTFT p99 serve/sim/err", "TPOT p50 serve/sim/err", "TPOT p99 serve/sim/err",
                   "throughput serve/sim/err", "serve spread", "preempt serve/sim",
                   in_sample ? "  fitted to its own steps: err (same order)" : "",
                   rerun ? "  serve's rerun: err" : "");
  const auto ms = [](double x) { return std::isfinite(x) ? fmt::format("{:.1f}", x * 1e3) : std::string("-"); };
  const auto count = [](double x) { return std::isfinite(x) ? fmt::format("{:.0f}", x) : std::string("-"); };
  const auto cell = [&](double a, double b) { return fmt::format("{}/{} {}", ms(a), ms(b), Pct(b, a)); };
  for (const auto& r : c.rows) {
    // The simulator fitted to this load's own steps, and goodput serve's rerun.
    const auto errors = [&](const std::optional<PointResult>& o) {
      if (!o) return std::string();
      return fmt::format("  {} {} {} {} {}", Pct(o->ttft.p50, r.serve.ttft.p50), Pct(o->ttft.p99, r.serve.ttft.p99),
                         Pct(o->tpot.p50, r.serve.tpot.p50), Pct(o->tpot.p99, r.serve.tpot.p99),
                         Pct(o->throughput, r.serve.throughput));
    };
    const std::string own = errors(r.sim_in_sample) + errors(r.serve_rerun);
    s += fmt::format("{:>6} {:>26} {:>26} {:>26} {:>26} {:>24} {:>12.1f}% {:>18}{}\n", r.serve.label,
                     cell(r.serve.ttft.p50, r.sim.ttft.p50), cell(r.serve.ttft.p99, r.sim.ttft.p99),
                     cell(r.serve.tpot.p50, r.sim.tpot.p50), cell(r.serve.tpot.p99, r.sim.tpot.p99),
                     fmt::format("{:.0f}/{:.0f} {}", r.serve.throughput, r.sim.throughput,
                                 Pct(r.sim.throughput, r.serve.throughput)),
                     100 * r.serve.throughput_spread,
                     fmt::format("{}/{}", count(r.serve.preemptions), count(r.sim.preemptions)), own);
  }
  if (!c.rows.empty()) {
    double rms_lo = INFINITY, rms_hi = 0;
    int64_t steps_lo = INT64_MAX, steps_hi = 0;
    for (const auto& r : c.rows) {
      rms_lo = std::min(rms_lo, r.fit_rms_log_error), rms_hi = std::max(rms_hi, r.fit_rms_log_error);
      steps_lo = std::min(steps_lo, r.fit_steps), steps_hi = std::max(steps_hi, r.fit_steps);
    }
    const auto range = [](auto lo, auto hi, const char* f) {
      return lo == hi ? fmt::format(fmt::runtime(f), lo)
                      : fmt::format(fmt::runtime(f), lo) + "-" + fmt::format(fmt::runtime(f), hi);
    };
    s += fmt::format("the simulator's calibration: rms log error {} over {} fitted steps\n",
                     range(rms_lo, rms_hi, "{:.3f}"), range(steps_lo, steps_hi, "{}"));
  }
  s += OpenP99Note(c);
  s += FleetLines(c);
  s += fmt::format("capacity: serve {}, sim {} ({} ladder step{} apart)\n", c.serve_capacity.value_or("none"),
                   c.sim_capacity.value_or("none"), c.capacity_steps_apart, c.capacity_steps_apart == 1 ? "" : "s");
  if (c.serve_capacity != c.sim_capacity)
    s += "goodput serve's " + c.serve_capacity_why + "the simulator's " + c.sim_capacity_why;
  // Failed requests count against attainment but not in the latencies: say so.
  for (const auto& r : c.rows) {
    if (!r.serve.top_error.empty())
      s += fmt::format("load {}: goodput serve failed {}\n", r.serve.label, r.serve.top_error);
    if (!r.sim.top_error.empty()) s += fmt::format("load {}: the simulator failed {}\n", r.sim.label, r.sim.top_error);
  }
  return s;
}

}  // namespace goodput
