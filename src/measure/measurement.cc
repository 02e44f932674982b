#include "measure/measurement.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "core/text.h"
#include "workload/day_profile.h"

namespace goodput {

Result<PointResult> MeasurePoint(Target& target, const Workload& workload, const ArrivalSpec& load,
                                 Repetitions reps, const RepetitionProgress& progress,
                                 std::vector<MeasuredRun>* runs_out, const std::function<bool()>& stop) {
  if (reps.min < 1) return Status::InvalidArgument("repeats must be at least 1");
  reps.max = std::max(reps.max, reps.min);
  std::vector<MeasuredRun> runs;
  PointResult point;
  for (int i = 1; i <= reps.max; ++i) {
    if (stop && stop()) return Status::FailedPrecondition("interrupted");
    if (progress) progress(i, i <= reps.min ? reps.min : reps.max);  // sequential: at most that many
    GOODPUT_ASSIGN_OR_RETURN(MeasuredRun run, target.Run(workload, load, i));
    runs.push_back(std::move(run));
    if (i < reps.min && !reps.sequential) continue;
    if (stop && stop()) return Status::FailedPrecondition("interrupted");  // the last run was cut short
    point = Summarise(workload, load, runs);
    if (point.verdict != Verdict::kUndecided) break;
  }
  if (runs_out) *runs_out = std::move(runs);
  return point;
}

Result<Vary> ParseVary(const std::string& text) {
  const size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0) {
    return Status::InvalidArgument(fmt::format("'{}' must look like FLAG=V1,V2", text));
  }
  Vary v;
  v.flag = text.substr(0, eq);
  while (v.flag.rfind('-', 0) == 0) v.flag.erase(0, 1);
  for (const std::string& value : Split(text.substr(eq + 1), ',')) {
    if (value.empty()) return Status::InvalidArgument(fmt::format("empty value in '{}'", text));
    v.values.push_back(value);
  }
  return v;
}

std::string Setting::Label() const {
  std::string out;
  for (const Flag& f : flags) out += (out.empty() ? "" : ", ") + f.name + "=" + f.value;
  return out;
}

std::vector<std::string> Setting::Args() const {
  std::vector<std::string> out;
  for (const Flag& f : flags) {
    out.push_back("--" + f.name);
    out.push_back(f.value);
  }
  return out;
}

const std::string* Setting::Find(const std::string& name) const {
  for (const Flag& f : flags) {
    if (f.name == name) return &f.value;
  }
  return nullptr;
}

Result<std::vector<Setting>> SettingGrid(const std::vector<Vary>& varied) {
  std::vector<Setting> grid = {Setting{}};
  for (size_t i = 0; i < varied.size(); ++i) {
    for (size_t j = 0; j < i; ++j) {
      if (varied[j].flag == varied[i].flag) {
        return Status::InvalidArgument(fmt::format("--vary: {} is varied twice", varied[i].flag));
      }
    }
    std::vector<Setting> next;
    for (const Setting& s : grid) {
      for (const std::string& value : varied[i].values) {
        Setting t = s;
        t.flags.push_back({varied[i].flag, value});
        next.push_back(std::move(t));
      }
    }
    grid = std::move(next);
  }
  return grid;
}

namespace {

Result<SettingResult> MeasureSetting(const MeasurementSpec& spec, const Setting& setting,
                                     const TargetFactory& make_target, const MeasurementHooks& hooks) {
  GOODPUT_ASSIGN_OR_RETURN(std::unique_ptr<Target> target, make_target(setting));
  SettingResult out;
  out.setting = setting.Label();
  out.target = target->Describe();
  out.startup_lines = target->StartupLines();
  out.memory_headroom = target->MemoryHeadroomBytes();
  const std::string prefix = out.setting.empty() ? "" : out.setting + ": ";
  const Workload& w = spec.workload;
  PointRunner run = [&](const ArrivalSpec& load) -> Result<PointResult> {
    auto progress = [&](int i, int n) {
      if (hooks.progress) {
        hooks.progress(fmt::format("{}load {}: run {} of {} ({} requests)", prefix, LoadLabel(load), i, n, w.requests));
      }
    };
    std::vector<MeasuredRun> runs;
    const Repetitions reps{spec.repeat, std::max(spec.repeat, spec.max_repeat), spec.search_capacity};
    GOODPUT_ASSIGN_OR_RETURN(PointResult point, MeasurePoint(*target, w, load, reps, progress, &runs, hooks.stop));
    if (hooks.on_point) GOODPUT_RETURN_IF_ERROR(hooks.on_point(setting, point, runs));
    return point;
  };
  // A capacity search over one starting load doubles and bisects; over a
  // given ladder it walks it up to the first load that does not hold.
  if (spec.search_capacity && spec.loads.size() == 1) {
    GOODPUT_ASSIGN_OR_RETURN(out.sweep, RunCapacitySearch(run, spec.loads.front(), spec.capacity, w.requests));
  } else {
    GOODPUT_ASSIGN_OR_RETURN(out.sweep, RunLadder(run, spec.loads, /*stop_at_first_miss=*/spec.search_capacity));
  }
  return out;
}

// "over peak" judges a day profile's busiest step: the workload needs a
// profile, a warm-up of whole steps (the windows start at its end), and the
// peak step inside the measurement window.
Status CheckPeakWindows(const Workload& w) {
  for (const RequestClass& c : w.classes) {
    if (!c.slo || !c.slo->peak) continue;
    if (!w.HasProfile()) {
      return Status::InvalidArgument(fmt::format(
          "class '{}': 'over peak' judges the busiest step of a day profile, and the workload has no profile_step "
          "(give a duration instead, e.g. over 5m)",
          c.name));
    }
    const double skipped = w.warmup.seconds.value_or(0) / w.profile_step_s;
    const double peak_end = (PeakStep(w) + 1) * w.profile_step_s;
    if (skipped != std::floor(skipped) || PeakStep(w) < static_cast<int>(skipped) ||
        peak_end > w.ProfileEnd() - w.cooldown.seconds.value_or(0)) {
      return Status::InvalidArgument(fmt::format(
          "class '{}': 'over peak' needs a warm-up of whole profile steps, and a warm-up and cool-down that leave "
          "the peak step measured",
          c.name));
    }
  }
  return Status::Ok();
}

}  // namespace

Status CheckMeasurementSpec(const MeasurementSpec& spec) {
  if (spec.loads.empty()) return Status::InvalidArgument("no load to measure");
  if (spec.repeat < 1) return Status::InvalidArgument("--repeat must be at least 1");
  if (spec.max_repeat != 0 && spec.max_repeat < spec.repeat) {
    return Status::InvalidArgument("--max-repeat must be at least --repeat");
  }
  GOODPUT_RETURN_IF_ERROR(CheckPeakWindows(spec.workload));
  if (spec.workload.HasProfile()) {
    const bool own = std::all_of(spec.loads.begin(), spec.loads.end(),
                                 [](const ArrivalSpec& l) { return l.kind == ArrivalKind::kProfile; });
    if (!own || spec.search_capacity) {
      return Status::InvalidArgument(
          "the workload's classes give their own rate for each step (profile_step): it runs at those rates, so "
          "--concurrency, --rate and a capacity search do not apply");
    }
  }
  for (const ArrivalSpec& load : spec.loads) {
    // The first wave (one request per client) is warm-up and the last
    // requests run while the clients drain: a steady state needs more
    // requests than twice the clients.
    if (load.kind == ArrivalKind::kClosedLoop && 2 * static_cast<int64_t>(load.concurrency) > spec.workload.requests) {
      return Status::InvalidArgument(fmt::format(
          "concurrency {} needs at least {} requests per run (it has {}): the first wave of {} is warm-up and as many "
          "run while the clients drain, so there would be no steady state to measure; raise --requests",
          load.concurrency, 2 * load.concurrency, spec.workload.requests, load.concurrency));
    }
  }
  return SettingGrid(spec.vary).status();
}

Result<std::vector<SettingResult>> Measure(const MeasurementSpec& spec, const TargetFactory& make_target,
                                           const MeasurementHooks& hooks) {
  GOODPUT_RETURN_IF_ERROR(CheckMeasurementSpec(spec));
  GOODPUT_ASSIGN_OR_RETURN(const std::vector<Setting> settings, SettingGrid(spec.vary));
  std::vector<SettingResult> out;
  for (const Setting& s : settings) {
    GOODPUT_ASSIGN_OR_RETURN(SettingResult r, MeasureSetting(spec, s, make_target, hooks));
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace goodput
