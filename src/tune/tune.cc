#include "tune/tune.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include <fmt/format.h>

#include "core/units.h"

namespace goodput {

namespace {

bool SameValue(const std::string& a, const std::string& b) {
  if (a == b) return true;
  char* end_a = nullptr;
  char* end_b = nullptr;
  const double x = std::strtod(a.c_str(), &end_a), y = std::strtod(b.c_str(), &end_b);
  if (!a.empty() && !b.empty() && *end_a == '\0' && *end_b == '\0') return x == y;
  auto bx = ParseBytes(a), by = ParseBytes(b);
  return bx.ok() && by.ok() && *bx == *by;
}

}  // namespace

bool ChangesNumerics(const Setting& s, const Setting& defaults) {
  static const char* const kNumerics[] = {
      "kv-cache-dtype",     "weights",          "quantization", "dtype", "num-speculative-tokens",
      "speculative-config", "speculative-model"};
  for (const Setting::Flag& f : s.flags) {
    const bool numerics =
        std::any_of(std::begin(kNumerics), std::end(kNumerics), [&](const char* n) { return f.name == n; });
    if (numerics && ChangedFlags(Setting{{f}}, defaults) > 0) return true;
  }
  return false;
}

int ChangedFlags(const Setting& s, const Setting& defaults) {
  int n = 0;
  for (const Setting::Flag& f : s.flags) {
    const std::string* d = defaults.Find(f.name);
    n += !d || !SameValue(*d, f.value);
  }
  return n;
}

namespace {

// The one target a factory built, handed to Measure once.
TargetFactory Once(std::unique_ptr<Target>& target) {
  return [&target](const Setting&) -> Result<std::unique_ptr<Target>> {
    if (!target) return Status::FailedPrecondition("the target was already used");
    return std::move(target);
  };
}

std::string CapacityText(const SettingResult& r) {
  if (!r.sweep.capacity) return "capacity none";
  const PointResult& p = r.sweep.points[*r.sweep.capacity];
  return fmt::format("capacity {}{}", p.label, r.sweep.capped ? " (still holding)" : "");
}

class Tuner {
 public:
  Tuner(const TuneSpec& spec, TuneSides sides) : spec_(spec), sides_(std::move(sides)) {}
  Result<TuneResult> Run();

 private:
  void Progress(const std::string& line) const {
    if (sides_.progress) sides_.progress(line);
  }
  MeasurementSpec SpecFor(double resolution, int repeat, int max_repeat, double start) const;
  // A capacity search's score: capacities within the search's resolution tie.
  SettingScore Score(const SettingResult& r, const Setting& s, double resolution) const {
    SettingScore sc = ScoreSweep(r.sweep, r.memory_headroom, ChangedFlags(s, spec_.defaults));
    sc.capacity_resolution = std::max(sc.capacity_resolution, resolution);
    return sc;
  }
  MeasurementHooks HooksFor(Side side, Fidelity f, const Setting& setting) const;
  Status CheckSpace() const;
  Result<Evaluation> Simulate(const Setting& s, Fidelity f) const;
  Result<Measured> Confirm(const Setting& s, bool baseline, std::optional<size_t> predicted);
  Status ConfirmTop();
  Status Refit();
  void Recommend();

  const TuneSpec& spec_;
  TuneSides sides_;
  TuneResult out_;
};

MeasurementSpec Tuner::SpecFor(double resolution, int repeat, int max_repeat, double start) const {
  MeasurementSpec m = spec_.measurement;
  m.vary.clear();
  m.search_capacity = true;
  m.repeat = repeat;
  m.max_repeat = max_repeat;
  m.capacity.resolution = resolution;
  m.capacity.start = start;
  return m;
}

// Measure sees one unnamed setting (the target is built already): the
// points are reported under `setting`.
MeasurementHooks Tuner::HooksFor(Side side, Fidelity f, const Setting& setting) const {
  MeasurementHooks h;
  h.stop = sides_.stop;
  if (sides_.on_point) {
    h.on_point = [this, side, f, setting](const Setting&, const PointResult& p, const std::vector<MeasuredRun>& runs) {
      return sides_.on_point(side, f, setting, p, runs);
    };
  }
  return h;
}

// Every value of every flag, alone, must be one the simulator takes: a typo
// ends the tuning here rather than pruning every setting it is in. Only a
// deployment that would not start (FailedPrecondition) may be pruned later.
Status Tuner::CheckSpace() const {
  for (const Dimension& d : spec_.space.dimensions) {
    for (const std::string& v : d.values) {
      auto t = sides_.simulator(Setting{{{d.flag, v}}});
      if (!t.ok() && t.status().code() != Status::Code::kFailedPrecondition) {
        return t.status().WithContext(fmt::format("--space {}={}", d.flag, v));
      }
    }
  }
  return Status::Ok();
}

Result<Evaluation> Tuner::Simulate(const Setting& s, Fidelity f) const {
  Evaluation e;
  auto target = sides_.simulator(s);
  if (!target.ok()) {
    const Status::Code code = target.status().code();
    if (code != Status::Code::kFailedPrecondition && code != Status::Code::kInvalidArgument) return target.status();
    e.pruned = target.status().message();
    return e;
  }
  std::unique_ptr<Target> t = std::move(*target);
  const bool full = f == Fidelity::kFull;
  const MeasurementSpec m = full ? SpecFor(spec_.full_resolution, spec_.measurement.repeat,
                                           std::max(spec_.measurement.repeat, spec_.measurement.max_repeat), 0)
                                 : SpecFor(spec_.screen_resolution, 1, 1, 0);
  GOODPUT_ASSIGN_OR_RETURN(auto results, Measure(m, Once(t), HooksFor(Side::kSimulator, f, s)));
  e.result = std::move(results.front());
  e.result.setting = s.Label();
  e.score = Score(e.result, s, m.capacity.resolution);
  return e;
}

Result<Measured> Tuner::Confirm(const Setting& s, bool baseline, std::optional<size_t> predicted) {
  Measured m;
  m.setting = s;
  m.baseline = baseline;
  m.predicted = predicted;
  const std::string name = baseline ? std::string("the baseline (the engine as configured)") : s.Label();
  const Evaluation* prediction = predicted                             ? &out_.search.evaluations[*predicted]
                                 : baseline && out_.baseline_simulated ? &*out_.baseline_simulated
                                                                       : nullptr;
  const double start = prediction && prediction->score.capacity ? *prediction->score.capacity : 0;
  Progress(fmt::format("target: {}: capacity search{}", name, start > 0 ? fmt::format(" from {:g}", start) : ""));
  auto target = sides_.target(s);
  if (!target.ok()) {
    m.failed = target.status().message();
    Progress(fmt::format("target: {}: did not start: {}", name, m.failed));
    return m;
  }
  std::unique_ptr<Target> t = std::move(*target);
  // Answers first, on the fresh engine: Measure releases the target at its end.
  // The baseline's are the reference, needed only when some flag of the space
  // can change numerics.
  bool numerics = false;
  for (const Dimension& d : spec_.space.dimensions) numerics = numerics || ChangesNumerics(Setting{{{d.flag, ""}}});
  if (sides_.check_outputs && (baseline ? numerics : ChangesNumerics(s, spec_.defaults))) {
    Progress(fmt::format("target: {}: {}", name, baseline ? "answers to compare with" : "comparing answers"));
    auto check = sides_.check_outputs(m, *t);
    if (check.ok()) m.outputs = *check;
    else m.outputs_note = "not compared: " + check.status().message();
  }
  const MeasurementSpec spec = SpecFor(spec_.target_resolution, spec_.measurement.repeat,
                                       std::max(spec_.measurement.repeat, spec_.measurement.max_repeat), start);
  GOODPUT_ASSIGN_OR_RETURN(auto results, Measure(spec, Once(t), HooksFor(Side::kTarget, Fidelity::kFull, s)));
  m.result = std::move(results.front());
  m.result.setting = s.Label();
  m.score = Score(m.result, s, spec.capacity.resolution);
  Progress(fmt::format("target: {}: {}", name, CapacityText(m.result)));
  return m;
}

// The measured settings that ran, ranked.
void RankMeasured(const std::vector<Measured>& measured, const RankTolerance& tolerance, std::vector<size_t>& ranked,
                  std::vector<RankCriterion>& above_next) {
  std::vector<size_t> running;
  std::vector<SettingScore> scores;
  for (size_t i = 0; i < measured.size(); ++i) {
    if (!measured[i].failed.empty()) continue;
    running.push_back(i);
    scores.push_back(measured[i].score);
  }
  const Ranking r = RankScores(scores, tolerance);
  ranked.clear();
  for (size_t k : r.order) ranked.push_back(running[k]);
  above_next = r.above_next;
}

bool IsMeasured(const std::vector<Measured>& measured, const Setting& s) {
  return std::any_of(measured.begin(), measured.end(),
                     [&](const Measured& m) { return !m.baseline && m.setting.Label() == s.Label(); });
}

Status Tuner::ConfirmTop() {
  for (size_t idx : out_.top) {
    const Setting& s = out_.search.evaluations[idx].setting;
    if (IsMeasured(out_.measured, s)) continue;
    GOODPUT_ASSIGN_OR_RETURN(Measured m, Confirm(s, false, idx));
    out_.measured.push_back(std::move(m));
  }
  RankMeasured(out_.measured, spec_.search.tolerance, out_.measured_ranked, out_.measured_above_next);
  return Status::Ok();
}

// The simulator fitted to everything the target measured; the search's best
// 2k settings simulated again in full and re-ranked; its first measured too
// when it was not.
Status Tuner::Refit() {
  Progress("simulator: fitting to the target's runs");
  GOODPUT_ASSIGN_OR_RETURN(sides_.simulator, sides_.fit(out_.measured));
  SearchResult refit;
  std::vector<size_t> all;
  for (size_t k = 0; k < out_.search.ranked.size() && k < 2 * static_cast<size_t>(spec_.top_k); ++k) {
    const Setting& s = out_.search.evaluations[out_.search.ranked[k]].setting;
    GOODPUT_ASSIGN_OR_RETURN(Evaluation e, Simulate(s, Fidelity::kFull));
    e.setting = s;
    refit.evaluations.push_back(std::move(e));
    all.push_back(all.size());
    Progress(fmt::format("simulator (refitted): {}: {}", s.Label(), CapacityText(refit.evaluations.back().result)));
  }
  refit.method = fmt::format("the search's best {} re-ranked by the simulator fitted to the target's runs", all.size());
  RankEvaluations(refit.evaluations, all, spec_.search.tolerance, refit.ranked, refit.above_next);
  if (!refit.ranked.empty()) {
    const Setting& first = refit.evaluations[refit.ranked.front()].setting;
    if (!IsMeasured(out_.measured, first)) {
      std::optional<size_t> predicted;
      for (size_t k : out_.search.ranked) {
        if (out_.search.evaluations[k].setting.Label() == first.Label()) predicted = k;
      }
      GOODPUT_ASSIGN_OR_RETURN(Measured m, Confirm(first, false, predicted));
      out_.measured.push_back(std::move(m));
      RankMeasured(out_.measured, spec_.search.tolerance, out_.measured_ranked, out_.measured_above_next);
    }
  }
  out_.refit = std::move(refit);
  return Status::Ok();
}

void Tuner::Recommend() {
  if (!out_.confirmed) {
    if (!out_.search.ranked.empty()) out_.recommended = out_.search.ranked.front();
    return;
  }
  for (size_t i : out_.measured_ranked) {
    const Measured& m = out_.measured[i];
    if (m.outputs && m.outputs->differ) {
      if (!out_.best_but_outputs_differ) out_.best_but_outputs_differ = i;
      continue;
    }
    out_.recommended = i;
    break;
  }
  if (!out_.top.empty() && !out_.measured_ranked.empty()) {
    const Measured& best = out_.measured[out_.measured_ranked.front()];
    out_.simulator_first_measured_best =
        !best.baseline && best.setting.Label() == out_.search.evaluations[out_.top.front()].setting.Label();
  }
}

Result<TuneResult> Tuner::Run() {
  if (spec_.measurement.loads.size() != 1) {
    return Status::InvalidArgument("tune starts every capacity search from one load: give one --concurrency or --rate");
  }
  if (spec_.top_k < 1) return Status::InvalidArgument("--top must be at least 1");
  out_.space = spec_.space.Describe();
  out_.confirmed = static_cast<bool>(sides_.target);
  if (sides_.target && sides_.fit_before_search) {
    GOODPUT_ASSIGN_OR_RETURN(Measured b, Confirm(Setting{}, true, std::nullopt));
    if (!b.failed.empty()) return Status::FailedPrecondition("the target does not start as configured: " + b.failed);
    out_.measured.push_back(std::move(b));
    Progress("simulator: fitting to the baseline's runs");
    GOODPUT_ASSIGN_OR_RETURN(sides_.simulator, sides_.fit(out_.measured));
  }
  if (!sides_.simulator) return Status::FailedPrecondition("no simulator to search on");
  GOODPUT_RETURN_IF_ERROR(CheckSpace());
  GOODPUT_ASSIGN_OR_RETURN(Evaluation base, Simulate(Setting{}, Fidelity::kFull));
  if (!base.runs()) return Status::FailedPrecondition("the engine as configured does not start: " + base.pruned);
  out_.baseline_simulated = std::move(base);
  SearchOptions o = spec_.search;
  o.progress = [this](const Evaluation& e, int done, int budget) {
    Progress(fmt::format("simulator: [{}/{}] {} ({}): {}", done, budget, e.setting.Label(), FidelityName(e.fidelity),
                         e.runs() ? CapacityText(e.result) : "cannot run: " + e.pruned));
  };
  GOODPUT_ASSIGN_OR_RETURN(out_.search,
                           SearchSettings(
                               spec_.space, [this](const Setting& s, Fidelity f) { return Simulate(s, f); }, o));
  for (size_t k = 0; k < out_.search.ranked.size() && static_cast<int>(k) < spec_.top_k; ++k) {
    out_.top.push_back(out_.search.ranked[k]);
  }
  if (sides_.target) {
    if (out_.measured.empty()) {
      GOODPUT_ASSIGN_OR_RETURN(Measured b, Confirm(Setting{}, true, std::nullopt));
      if (!b.failed.empty()) return Status::FailedPrecondition("the target does not start as configured: " + b.failed);
      out_.measured.push_back(std::move(b));
    }
    GOODPUT_RETURN_IF_ERROR(ConfirmTop());
    if (spec_.recalibrate) GOODPUT_RETURN_IF_ERROR(Refit());
  }
  Recommend();
  return out_;
}

}  // namespace

Result<TuneResult> Tune(const TuneSpec& spec, TuneSides sides) { return Tuner(spec, std::move(sides)).Run(); }

}  // namespace goodput
