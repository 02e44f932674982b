#include "tune/tune_report.h"

#include <algorithm>
#include <cmath>

#include <boost/json.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "tune/reasons.h"
#include "tune/serve_flags.h"

namespace goodput {

namespace json = boost::json;

const Setting* RecommendedSetting(const TuneResult& r) {
  if (!r.recommended) return nullptr;
  return r.confirmed ? &r.measured[*r.recommended].setting : &r.search.evaluations[*r.recommended].setting;
}

namespace {

// On the simulator alone: whether the engine as configured holds more load
// than the recommended setting (a space that leaves out the engine's values).
bool BaselineHoldsMore(const TuneResult& r) {
  if (r.confirmed || !r.recommended || !r.baseline_simulated) return false;
  const std::optional<double>& base = r.baseline_simulated->score.capacity;
  const std::optional<double>& best = r.search.evaluations[*r.recommended].score.capacity;
  return base && best && *base > *best;
}

std::string Name(const Setting& s, bool baseline) { return baseline ? "baseline (as configured)" : s.Label(); }

std::string Cap(const SettingScore& sc, const SettingResult& r) {
  if (!sc.judged) return "-";
  if (!r.sweep.capacity) return "none";
  return r.sweep.points[*r.sweep.capacity].label + (r.sweep.capped ? "+" : "");
}

std::string Margin(double m) { return std::isnan(m) ? "-" : fmt::format("{:+.0f}%", 100 * m); }

// "interactive 100.0% [92.1,100.0] n=120" for each class with an SLO at capacity.
std::string AttainmentAt(const SettingResult& r) {
  if (!r.sweep.capacity) return "-";
  std::string s;
  for (const ClassAttainment& c : r.sweep.points[*r.sweep.capacity].classes) {
    if (!c.has_slo || c.total == 0) continue;
    s += fmt::format("{}{} {:.1f}% [{:.1f},{:.1f}] n={}", s.empty() ? "" : "; ", c.class_name, 100 * c.attainment,
                     100 * c.interval.lower, 100 * c.interval.upper, c.total);
  }
  return s.empty() ? "-" : s;
}

std::string Header(const TuneSpec& spec, const TuneResult& r) {
  const Workload& w = spec.measurement.workload;
  const SloSpec slo = w.Slo();
  std::string s = fmt::format("goodput tune: workload {} ({} requests per run), SLO: {}\n", w.name, w.requests,
                              slo.empty() ? std::string("none (ranked by served throughput)") : slo.ToString());
  if (r.baseline_simulated) s += "simulator: " + r.baseline_simulated->result.target + "\n";
  s += fmt::format("space: {} ({} settings)\nsearch: {}{}\n", r.space, spec.space.GridSize(), r.search.method,
                   r.search.budget_spent ? " - stopped at its budget before converging (--budget)" : "");
  return s;
}

// A setting as one cell per flag of the space, in columns as wide as their headers.
struct FlagColumns {
  std::vector<std::string> flags;
  std::vector<size_t> widths;
  explicit FlagColumns(const SearchSpace& space) {
    for (const Dimension& d : space.dimensions) {
      size_t w = d.flag.size();
      for (const std::string& v : d.values) w = std::max(w, v.size());
      flags.push_back(d.flag);
      widths.push_back(w + 2);
    }
  }
  std::string Header() const {
    std::string s;
    for (size_t i = 0; i < flags.size(); ++i) s += fmt::format("{:<{}}", flags[i], widths[i]);
    return s;
  }
  std::string Row(const Setting& setting) const {
    std::string s;
    for (size_t i = 0; i < flags.size(); ++i) {
      const std::string* v = setting.Find(flags[i]);
      s += fmt::format("{:<{}}", v ? *v : "-", widths[i]);
    }
    return s;
  }
  size_t Width() const {
    size_t w = 0;
    for (size_t x : widths) w += x;
    return w;
  }
};

std::string SimulatorRanking(const TuneSpec& spec, const TuneResult& r) {
  const FlagColumns cols(spec.space);
  std::string s = fmt::format("\nThe simulator's ranking (full capacity searches, {} of {} evaluated in full):\n",
                              std::min<size_t>(10, r.search.ranked.size()), r.search.ranked.size());
  s += fmt::format("  {:>3}  {}{:>10}{:>15}{:>18}{:>12}  {}\n", "#", cols.Header(), "capacity", "goodput req/s",
                   "throughput tok/s", "SLO margin", "above the next by");
  for (size_t k = 0; k < r.search.ranked.size() && k < 10; ++k) {
    const Evaluation& e = r.search.evaluations[r.search.ranked[k]];
    s += fmt::format("  {:>3}  {}{:>10}{:>15.2f}{:>18.0f}{:>12}  {}\n", k + 1, cols.Row(e.setting),
                     Cap(e.score, e.result), e.score.goodput, e.score.throughput, Margin(e.score.slo_margin),
                     k + 1 < r.search.ranked.size() ? RankCriterionName(r.search.above_next[k]) : "");
  }
  if (r.baseline_simulated) {
    const Evaluation& b = *r.baseline_simulated;
    s += fmt::format("       {:<{}}{:>10}{:>15.2f}{:>18.0f}{:>12}\n", "baseline (as configured)", cols.Width(),
                     Cap(b.score, b.result), b.score.goodput, b.score.throughput, Margin(b.score.slo_margin));
  }
  int pruned = 0;
  for (const Evaluation& e : r.search.evaluations) {
    if (e.runs() || ++pruned > 3) continue;
    s += fmt::format("  cannot run: {}: {}\n", e.setting.Label(), e.pruned);
  }
  if (pruned > 3) s += fmt::format("  ... {} settings in all cannot run (--json lists them)\n", pruned);
  return s;
}

std::string OutputsCell(const TuneSpec& spec, const TuneResult& r, const Measured& m) {
  if (m.baseline) {
    const bool compared =
        std::any_of(r.measured.begin(), r.measured.end(), [](const Measured& x) { return x.outputs; });
    return !m.outputs_note.empty() ? m.outputs_note : compared ? "reference" : "-";
  }
  if (m.outputs) return m.outputs->differ ? "DIFFER" : "agree";
  return m.outputs_note.empty() ? (ChangesNumerics(m.setting, spec.defaults) ? "not compared" : "same numerics")
                                : m.outputs_note;
}

std::string TargetTable(const TuneSpec& spec, const TuneResult& r) {
  if (!r.confirmed || r.measured.empty()) return "";
  const FlagColumns cols(spec.space);
  const auto name = [&](const Measured& m) {
    return m.baseline ? fmt::format("{:<{}}", "baseline (as configured)", cols.Width()) : cols.Row(m.setting);
  };
  std::string s = fmt::format("\nMeasured on the target: {}\n", r.measured.front().result.target);
  s += fmt::format("  {}{:>11}{:>10}{:>17}  {:<40}  {}\n", cols.Header(), "predicted", "measured", "goodput sim/meas",
                   "attainment at capacity", "outputs");
  for (const Measured& m : r.measured) {
    const Evaluation* p = m.predicted                          ? &r.search.evaluations[*m.predicted]
                          : m.baseline && r.baseline_simulated ? &*r.baseline_simulated
                                                               : nullptr;
    if (!m.failed.empty()) {
      s += fmt::format("  {}did not start: {}\n", name(m), m.failed);
      continue;
    }
    s +=
        fmt::format("  {}{:>11}{:>10}{:>17}  {:<40}  {}\n", name(m), p ? Cap(p->score, p->result) : "-",
                    Cap(m.score, m.result), fmt::format("{:.2f} / {:.2f}", p ? p->score.goodput : NAN, m.score.goodput),
                    AttainmentAt(m.result), OutputsCell(spec, r, m));
    if (m.outputs) s += "      outputs: " + m.outputs->Summary() + "\n";
  }
  if (!r.simulator_first_measured_best && !r.measured_ranked.empty() && !r.top.empty()) {
    s += fmt::format(
        "note: the simulator's first ({}) is not the measured best ({}): the target's measurements decide\n",
        r.search.evaluations[r.top.front()].setting.Label(),
        Name(r.measured[r.measured_ranked.front()].setting, r.measured[r.measured_ranked.front()].baseline));
  }
  return s;
}

// The flags of `s` whose values differ from `defaults` (all, when none is known).
Setting Changes(const Setting& s, const Setting& defaults) {
  Setting out;
  for (const Setting::Flag& f : s.flags) {
    if (ChangedFlags(Setting{{f}}, defaults) > 0) out.flags.push_back(f);
  }
  return out;
}

// The search's best re-ranked by the simulator refitted to the target's runs.
std::string RefitTable(const TuneSpec& spec, const TuneResult& r) {
  if (!r.refit) return "";
  const FlagColumns cols(spec.space);
  std::string s = fmt::format("\nAfter --recalibrate, {}:\n  {:>3}  {}{:>10}{:>15}\n", r.refit->method, "#",
                              cols.Header(), "capacity", "goodput req/s");
  for (size_t k = 0; k < r.refit->ranked.size(); ++k) {
    const Evaluation& e = r.refit->evaluations[r.refit->ranked[k]];
    s += fmt::format("  {:>3}  {}{:>10}{:>15.2f}\n", k + 1, cols.Row(e.setting), Cap(e.score, e.result),
                     e.score.goodput);
  }
  return s;
}

std::string FlagsBlock(const TuneSpec& spec, const Setting& s) {
  if (s.empty()) return "  keep the engine's settings as they are\n";
  const ServeFlags v = ServeFlagsFor(s, spec.engine);
  std::string out = fmt::format("  engine flags: {}\n", fmt::join(s.Args(), " "));
  const Setting changes = Changes(s, spec.defaults);
  if (changes.flags.size() < s.flags.size()) {
    out += changes.empty()
               ? "  (every one is the engine's own value)\n"
               : fmt::format("  changed from the engine's own values: {}\n", fmt::join(changes.Args(), " "));
  }
  if (!v.command.empty() && !v.args.empty()) out += fmt::format("  {} ... {}\n", v.command, fmt::join(v.args, " "));
  for (const std::string& n : v.notes) out += "  note: " + n + "\n";
  return out;
}

std::string Recommendation(const TuneSpec& spec, const TuneResult& r) {
  const Setting* s = RecommendedSetting(r);
  if (!s) return "\nNo recommendation: no setting could run.\n";
  const bool measured = r.confirmed;
  const SettingResult& res = measured ? r.measured[*r.recommended].result : r.search.evaluations[*r.recommended].result;
  const SettingScore& sc = measured ? r.measured[*r.recommended].score : r.search.evaluations[*r.recommended].score;
  const bool baseline = measured && r.measured[*r.recommended].baseline;
  std::string out = fmt::format("\nRecommendation: {}\n", baseline ? "the engine as configured" : s->Label());
  const SettingResult* base = measured && !r.measured.empty() ? &r.measured.front().result
                              : r.baseline_simulated          ? &r.baseline_simulated->result
                                                              : nullptr;
  const SettingScore* base_score = measured && !r.measured.empty() ? &r.measured.front().score
                                   : r.baseline_simulated          ? &r.baseline_simulated->score
                                                                   : nullptr;
  std::string versus;
  if (base && base_score && base_score->capacity && sc.capacity && !baseline) {
    versus = fmt::format("; the baseline's {} ({:+.0f}%)", Cap(*base_score, *base),
                         100 * (*sc.capacity / *base_score->capacity - 1));
  }
  if (!sc.judged) {
    out += fmt::format("  served throughput {:.0f} tok/s at the most load tried ({}; no class has an SLO, so settings "
                       "are ranked by it)\n",
                       sc.throughput, measured ? "measured" : "simulated");
  } else {
    out += fmt::format("  capacity {} ({}{}), goodput {:.2f} req/s, {:.0f} tok/s\n", Cap(sc, res),
                       measured ? "measured" : "simulated", versus, sc.goodput, sc.throughput);
    out += fmt::format("  at capacity: {}; SLO margin {}\n", AttainmentAt(res), Margin(sc.slo_margin));
    if (BaselineHoldsMore(r)) {
      out += fmt::format(
          "  note: the engine as configured holds more load than any setting searched ({} against {}): the space "
          "leaves out the engine's own values; keep them, or widen the space to take them in\n",
          Cap(*base_score, *base), Cap(sc, res));
    }
  }
  if (!baseline) {
    const std::vector<std::string> why = Reasons(r.search, spec.space, *s);
    if (!why.empty()) out += "  why (from the simulator's search):\n";
    for (const std::string& line : why) out += "    " + line + "\n";
  }
  if (measured && r.measured[*r.recommended].outputs) {
    out += "  outputs against the baseline: " + r.measured[*r.recommended].outputs->Summary() + "\n";
  } else if (!measured && ChangesNumerics(*s, spec.defaults)) {
    out += "  outputs: not compared (the simulator has no outputs; confirm on a real target)\n";
  }
  out += FlagsBlock(spec, *s);
  if (r.best_but_outputs_differ) {
    const Measured& m = r.measured[*r.best_but_outputs_differ];
    out += fmt::format("  faster, but its outputs differ: {} (capacity {}): {}\n", m.setting.Label(),
                       Cap(m.score, m.result), m.outputs->Summary());
  }
  return out;
}

json::value ScoreJson(const SettingScore& sc, const SettingResult& r) {
  json::object o{{"capacity", r.sweep.capacity ? json::value(r.sweep.points[*r.sweep.capacity].label) : nullptr},
                 {"capacity_load", sc.capacity ? json::value(*sc.capacity) : nullptr},
                 {"capacity_capped", r.sweep.capped},
                 {"goodput_requests_per_s", sc.goodput},
                 {"throughput_tokens_per_s", sc.throughput},
                 {"slo_margin", std::isnan(sc.slo_margin) ? json::value(nullptr) : json::value(sc.slo_margin)},
                 {"target", r.target}};
  if (sc.memory_headroom) o["memory_headroom_bytes"] = *sc.memory_headroom;
  if (const std::string limit = LimitOf(r); !limit.empty()) o["limit"] = limit;
  return o;
}

json::value EvaluationJson(const Evaluation& e) {
  json::object o{{"setting", e.setting.Label()}, {"fidelity", FidelityName(e.fidelity)}};
  if (!e.runs()) o["cannot_run"] = e.pruned;
  else o["simulated"] = ScoreJson(e.score, e.result);
  return o;
}

json::value MeasuredJson(const TuneResult& r, const Measured& m) {
  json::object o{{"setting", m.setting.Label()}, {"baseline", m.baseline}};
  if (!m.failed.empty()) o["did_not_start"] = m.failed;
  else o["measured"] = ScoreJson(m.score, m.result);
  const Evaluation* p = m.predicted                          ? &r.search.evaluations[*m.predicted]
                        : m.baseline && r.baseline_simulated ? &*r.baseline_simulated
                                                             : nullptr;
  if (p) o["simulated"] = ScoreJson(p->score, p->result);
  if (m.outputs) o["outputs"] = OutputComparisonToJson(*m.outputs);
  if (!m.outputs_note.empty()) o["outputs_note"] = m.outputs_note;
  return o;
}

json::value RecommendationJson(const TuneSpec& spec, const TuneResult& r) {
  const Setting* s = RecommendedSetting(r);
  if (!s) return nullptr;
  const ServeFlags v = ServeFlagsFor(*s, spec.engine);
  json::object o{{"setting", s->Label()},
                 {"measured", r.confirmed},
                 {"engine_args", json::value_from(s->Args())},
                 {"changed_args", json::value_from(Changes(*s, spec.defaults).Args())},
                 {"serve_engine", spec.engine},
                 {"serve_command", v.command},
                 {"serve_args", json::value_from(v.args)},
                 {"serve_notes", json::value_from(v.notes)},
                 {"reasons", json::value_from(Reasons(r.search, spec.space, *s))}};
  if (v.command == ServeCommand("vllm")) {  // the keys before other engines were spelled
    o["vllm_serve_args"] = o["serve_args"];
    o["vllm_notes"] = o["serve_notes"];
  }
  if (!r.confirmed) o["baseline_holds_more"] = BaselineHoldsMore(r);
  if (r.best_but_outputs_differ)
    o["faster_but_outputs_differ"] = r.measured[*r.best_but_outputs_differ].setting.Label();
  return o;
}

}  // namespace

std::string FormatTune(const TuneSpec& spec, const TuneResult& r) {
  return Header(spec, r) + SimulatorRanking(spec, r) + TargetTable(spec, r) + RefitTable(spec, r) +
         Recommendation(spec, r);
}

json::value TuneToJson(const TuneSpec& spec, const TuneResult& r) {
  json::array evaluations, ranked, measured, top;
  for (const Evaluation& e : r.search.evaluations) evaluations.push_back(EvaluationJson(e));
  for (size_t i : r.search.ranked) ranked.push_back(json::value(r.search.evaluations[i].setting.Label()));
  for (size_t i : r.top) top.push_back(json::value(r.search.evaluations[i].setting.Label()));
  for (const Measured& m : r.measured) measured.push_back(MeasuredJson(r, m));
  json::object o{{"space", r.space},
                 {"grid_size", spec.space.GridSize()},
                 {"method", r.search.method},
                 {"budget_spent", r.search.budget_spent},
                 {"evaluations", evaluations},
                 {"simulator_ranking", ranked},
                 {"top", top},
                 {"confirmed", r.confirmed},
                 {"measured", measured},
                 {"simulator_first_measured_best", r.simulator_first_measured_best},
                 {"recommendation", RecommendationJson(spec, r)}};
  if (r.baseline_simulated) o["baseline_simulated"] = EvaluationJson(*r.baseline_simulated);
  if (r.refit) {
    json::array refit;
    for (size_t i : r.refit->ranked) refit.push_back(EvaluationJson(r.refit->evaluations[i]));
    o["refit"] = json::object{{"method", r.refit->method}, {"ranking", refit}};
  }
  return o;
}

std::string RecommendationYaml(const TuneSpec& spec, const TuneResult& r) {
  const Setting* s = RecommendedSetting(r);
  if (!s) return "";
  const ServeFlags v = ServeFlagsFor(*s, spec.engine);
  if (v.command.empty()) return "";
  std::string out = fmt::format("# goodput tune's recommendation for workload {} (SLO: {}); {} --config FILE\n",
                                spec.measurement.workload.name, spec.measurement.workload.Slo().ToString(), v.command);
  for (const std::string& n : v.notes) out += "# note: " + n + "\n";
  for (const std::string& line : v.yaml) out += line + "\n";
  return out;
}

}  // namespace goodput
