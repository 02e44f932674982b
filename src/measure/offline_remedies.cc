#include "measure/offline_remedies.h"

#include <algorithm>
#include <cmath>

#include <boost/json.hpp>
#include <fmt/format.h>

#include "core/units.h"
#include "measure/point_json.h"
#include "measure/point_report.h"
#include "workload/day_profile.h"

namespace goodput {
namespace {

Status CheckComparable(const Workload& w) {
  if (!w.HasProfile()) {
    return Status::InvalidArgument(
        "--compare-offline needs a day profile: a workload with 'profile_step' and a "
        "'profile' per class (docs/sim.md, \"A day\")");
  }
  const bool offline = std::any_of(w.classes.begin(), w.classes.end(), [](const auto& c) { return c.offline; });
  const bool windowed = std::any_of(w.classes.begin(), w.classes.end(),
                                    [](const auto& c) { return c.slo && (c.slo->window_s > 0 || c.slo->peak); });
  if (!offline) return Status::InvalidArgument("--compare-offline: the workload has no offline class to move");
  if (!windowed) {
    return Status::InvalidArgument(
        "--compare-offline compares the classes window by window: give a class an SLO "
        "with a window, e.g. --slo 'interactive: ttft p99 <= 1s over 1h'");
  }
  return Status::Ok();
}

// "13:00" for a time into the profile, when windows are whole minutes;
// else seconds.
std::string Clock(double seconds, double window_s) {
  return std::fmod(window_s, 60) != 0 ? fmt::format("{:g} s", seconds) : ClockTime(seconds);
}

// "1 h", "10 min", "90 s".
std::string StepText(double s) {
  if (std::fmod(s, 3600) == 0) return fmt::format("{:g} h", s / 3600);
  if (std::fmod(s, 60) == 0) return fmt::format("{:g} min", s / 60);
  return fmt::format("{:g} s", s);
}

int64_t WindowsHeld(const ClassAttainment& c) {
  return std::count_if(c.window_counts.begin(), c.window_counts.end(), [&](const auto& gt) {
    return JudgeAttainment(gt.first, gt.second, c.required) == Verdict::kHolds;
  });
}

// Columns after the arrangement: class, windows held, deciding window,
// attainment and requests (pooled over `runs`), verdict; offline classes by
// their requests per run and throughput.
std::string ClassRow(const ClassAttainment& c, double start, int runs) {
  if (c.offline || !c.has_slo) {
    return fmt::format("{:<12} {} requests a run, {:.0f} tok/s (no SLO)\n", c.class_name,
                       FormatCount(c.total / std::max(runs, 1)), c.throughput);
  }
  std::string held = "whole run", decider = "-";
  if (c.window_s > 0 && c.worst_window >= 0) {
    held = fmt::format("{} of {}", WindowsHeld(c), c.window_counts.size());
    const double from = start + c.worst_window * c.window_s;
    decider =
        fmt::format("{} ({}-{})", c.worst_window + 1, Clock(from, c.window_s), Clock(from + c.window_s, c.window_s));
  }
  return fmt::format("{:<12} {:<13} {:<19} {:<18} {}\n", c.class_name, held, decider,
                     fmt::format("{:.1f}% n={}", 100 * c.attainment, FormatCount(c.total)), VerdictName(c.verdict));
}

}  // namespace

Result<std::vector<OfflineArrangement>> OfflineArrangements(const Workload& w, int offline_cap) {
  GOODPUT_RETURN_IF_ERROR(CheckComparable(w));
  if (offline_cap < 1) return Status::InvalidArgument("--compare-offline: the offline cap must be at least 1");
  std::vector<OfflineArrangement> out;
  out.push_back({"as given", "offline requests at the rates the profile gives them", w, {}});
  out.push_back({"quiet hours",
                 fmt::format("offline requests spread over the quiet hours {} (the other classes' rate <= "
                             "its median)",
                             DescribeSteps(QuietSteps(w), w.profile_step_s)),
                 WithOfflineInQuietSteps(w),
                 {}});
  out.push_back({"priority + cap",
                 fmt::format("as given, with --scheduling-policy priority --max-offline-seqs {}", offline_cap),
                 w,
                 {Vary{"scheduling-policy", {"priority"}}, Vary{"max-offline-seqs", {std::to_string(offline_cap)}}}});
  return out;
}

Result<std::vector<ArrangementResult>> CompareOfflineArrangements(const MeasurementSpec& spec, int offline_cap,
                                                                  const TargetFactory& make_target,
                                                                  const MeasurementHooks& hooks) {
  if (!spec.vary.empty()) {
    return Status::InvalidArgument("--compare-offline runs its own three settings; drop --vary");
  }
  GOODPUT_ASSIGN_OR_RETURN(std::vector<OfflineArrangement> arrangements,
                           OfflineArrangements(spec.workload, offline_cap));
  std::vector<ArrangementResult> out;
  for (OfflineArrangement& a : arrangements) {
    MeasurementSpec one = spec;
    one.workload = a.workload;
    one.vary = a.flags;
    MeasurementHooks labelled = hooks;
    if (hooks.progress) labelled.progress = [&](const std::string& line) { hooks.progress(a.label + ": " + line); };
    GOODPUT_ASSIGN_OR_RETURN(std::vector<SettingResult> r, Measure(one, make_target, labelled));
    out.push_back({std::move(a), std::move(r.at(0))});
  }
  return out;
}

std::string FormatOfflineComparison(const std::vector<ArrangementResult>& results) {
  if (results.empty()) return "";
  const Workload& w = results[0].arrangement.workload;
  std::string s = fmt::format(
      "Offline work three ways over the profile: {} steps of {}, each run through them "
      "all\ntarget: {}\n\n",
      w.ProfileSteps(), StepText(w.profile_step_s), results[0].result.target);
  for (const auto& r : results) s += fmt::format("  {:<15} {}\n", r.arrangement.label, r.arrangement.description);
  s += fmt::format("\n{:<15} {:<4} {:<12} {:<13} {:<19} {:<18} {}\n", "arrangement", "runs", "class", "windows held",
                   "deciding window", "attainment", "verdict");
  const double start = w.warmup.seconds.value_or(0);
  for (const auto& r : results) {
    const PointResult& p = r.result.sweep.points.at(0);
    std::string label = r.arrangement.label, runs = std::to_string(p.repeats);
    for (const ClassAttainment& c : p.classes) {
      s += fmt::format("{:<15} {:<4} {}", label, runs, ClassRow(c, start, p.repeats));
      label.clear(), runs.clear();
    }
    if (p.saturation.saturated) s += fmt::format("{:<20} not sustainable: {}\n", "", p.saturation.Evidence());
  }
  s += "\nby window, in order (h holds, f fails, u undecided, - no request):\n";
  for (size_t k = 0; k < results[0].result.sweep.points.at(0).classes.size(); ++k) {
    for (const auto& r : results) {
      const ClassAttainment& c = r.result.sweep.points.at(0).classes.at(k);
      if (c.window_s <= 0) continue;
      s += fmt::format("  {:<12} {:<15} {}\n", c.class_name, r.arrangement.label, WindowVerdicts(c));
    }
  }
  return s;
}

boost::json::value OfflineComparisonToJson(const std::vector<ArrangementResult>& results) {
  boost::json::array arrangements;
  for (const auto& r : results) {
    arrangements.push_back({{"label", r.arrangement.label},
                            {"description", r.arrangement.description},
                            {"target", r.result.target},
                            {"point", PointToJson(r.result.sweep.points.at(0))}});
  }
  return {{"arrangements", std::move(arrangements)}};
}

}  // namespace goodput
