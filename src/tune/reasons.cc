#include "tune/reasons.h"

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "core/units.h"

namespace goodput {
namespace {

std::string Unit(const PointResult& p) { return p.load.kind == ArrivalKind::kClosedLoop ? " clients" : ""; }

// The class that keeps a point from holding: a failing one, else an undecided one.
const ClassAttainment* Limiting(const PointResult& p) {
  const ClassAttainment* worst = nullptr;
  for (const ClassAttainment& c : p.classes) {
    if (!c.has_slo || c.holds()) continue;
    if (!worst || (c.verdict == Verdict::kFails && worst->verdict != Verdict::kFails)) worst = &c;
  }
  return worst;
}

std::string CapacityWords(const SettingScore& s, const SettingResult& r) {
  if (!s.capacity) return "none";
  return r.sweep.points[*r.sweep.capacity].label + Unit(r.sweep.points[*r.sweep.capacity]);
}

// The two capacities the ranking took as alike: one figure when they are
// equal, else both (within the coarser search's resolution).
std::string AlikeCapacities(const Evaluation& chosen, const Evaluation& other) {
  const std::string a = CapacityWords(chosen.score, chosen.result), b = CapacityWords(other.score, other.result);
  return a == b ? "capacity " + a : fmt::format("capacity {} vs {}, alike within the search's resolution", a, b);
}

// How `chosen` compares with `other` on the criterion that decided.
std::string Versus(const Evaluation& chosen, const Evaluation& other, RankCriterion by) {
  const SettingScore &a = chosen.score, &b = other.score;
  switch (by) {
    case RankCriterion::kCapacity:
      return fmt::format("capacity {} vs {}", CapacityWords(a, chosen.result), CapacityWords(b, other.result));
    case RankCriterion::kGoodput:
      return fmt::format("{}; goodput {:.2f} vs {:.2f} req/s", AlikeCapacities(chosen, other), a.goodput, b.goodput);
    case RankCriterion::kThroughput:
      return fmt::format("throughput {:.0f} vs {:.0f} tok/s", a.throughput, b.throughput);
    case RankCriterion::kSloMargin:
      return fmt::format("{}, goodput alike; SLO margin {:+.0f}% vs {:+.0f}%", AlikeCapacities(chosen, other),
                         100 * a.slo_margin, 100 * b.slo_margin);
    case RankCriterion::kMemoryHeadroom:
      return fmt::format("the same load; {} left unallocated vs {}", FormatGiB(a.memory_headroom.value_or(0)),
                         FormatGiB(b.memory_headroom.value_or(0)));
    case RankCriterion::kChangedFlags:
      return "the same figures; nearer the engine's own settings";
    case RankCriterion::kTie:
      return "";
  }
  return "";
}

// Whether `e` differs from `chosen` in flag `flag` alone.
bool OnlyDiffersIn(const Setting& e, const Setting& chosen, const std::string& flag) {
  if (e.flags.size() != chosen.flags.size()) return false;
  bool differs = false;
  for (const Setting::Flag& f : chosen.flags) {
    const std::string* v = e.Find(f.name);
    if (!v) return false;
    if (*v == f.value) continue;
    if (f.name != flag) return false;
    differs = true;
  }
  return differs;
}

// The best evaluation of each setting (a full one over a screening).
const Evaluation* Best(const std::vector<Evaluation>& evaluations, const Setting& s) {
  const Evaluation* found = nullptr;
  for (const Evaluation& e : evaluations) {
    if (e.setting.Label() != s.Label()) continue;
    if (!found || (e.fidelity == Fidelity::kFull && found->fidelity != Fidelity::kFull)) found = &e;
  }
  return found;
}

// The other values of `d` nearest the chosen one first (a tie between two
// values is then decided for the nearer).
std::vector<std::string> ByDistance(const Dimension& d, const std::string& chosen) {
  const auto at = std::find(d.values.begin(), d.values.end(), chosen) - d.values.begin();
  std::vector<std::pair<std::ptrdiff_t, std::string>> order;
  for (std::ptrdiff_t i = 0; i < static_cast<std::ptrdiff_t>(d.values.size()); ++i) {
    if (i != at) order.emplace_back(std::abs(i - at), d.values[i]);
  }
  std::stable_sort(order.begin(), order.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
  std::vector<std::string> out;
  for (auto& [distance, v] : order) out.push_back(std::move(v));
  return out;
}

std::string FlagReason(const SearchResult& search, const Evaluation& chosen, const Dimension& d) {
  const std::string& flag = d.flag;
  const std::string& value = *chosen.setting.Find(flag);
  std::map<std::string, const Evaluation*> others;  // by value
  for (const Evaluation& e : search.evaluations) {
    if (OnlyDiffersIn(e.setting, chosen.setting, flag))
      others[*e.setting.Find(flag)] = Best(search.evaluations, e.setting);
  }
  const std::string head = flag + "=" + value;
  if (others.empty()) return head + ": no other value was tried with the rest of this setting";
  const Evaluation* best = nullptr;
  std::string cannot;
  for (const std::string& v : ByDistance(d, value)) {
    auto it = others.find(v);
    if (it == others.end()) continue;
    const Evaluation* e = it->second;
    if (!e->runs()) {
      cannot += (cannot.empty() ? "" : ", ") + v;
      continue;
    }
    if (!best || CompareScores(e->score, best->score).sign > 0) best = e;
  }
  std::string s = head;
  if (best) {
    const std::string bv = *best->setting.Find(flag);
    const std::string screened = best->fidelity == Fidelity::kScreen ? ", screened" : "";
    const ScoreOrder order = CompareScores(chosen.score, best->score);
    if (order.sign > 0) {
      s += fmt::format(" over {} (the best other value{}): {}", bv, screened, Versus(chosen, *best, order.by));
      const std::string limit = order.by == RankCriterion::kCapacity ? LimitOf(best->result) : "";
      if (!limit.empty()) s += fmt::format(" ({}: {})", bv, limit);
    } else if (order.sign == 0) {
      s += fmt::format(": {} does as well{} (capacity {})", bv, screened, CapacityWords(best->score, best->result));
    } else {
      s += fmt::format(": the simulator ranks {} higher{} ({}); this value was chosen by what the target measured", bv,
                       screened, Versus(*best, chosen, CompareScores(best->score, chosen.score).by));
    }
  }
  if (!cannot.empty()) s += fmt::format("; {} cannot run", cannot);
  return s;
}

}  // namespace

std::string LimitOf(const SettingResult& r) {
  const auto& points = r.sweep.points;
  if (points.empty()) return "";
  size_t at = 0;
  if (r.sweep.capacity) {
    if (*r.sweep.capacity + 1 >= points.size()) return "";
    at = *r.sweep.capacity + 1;
  }
  const PointResult& p = points[at];
  std::vector<std::string> why;
  if (p.saturation.saturated) why.push_back("not sustainable: " + p.saturation.Evidence());
  if (std::isfinite(p.preemptions) && p.preemptions > 0)
    why.push_back(fmt::format("{:.0f} preemptions (the KV pool filled)", p.preemptions));
  if (p.rejected > 0) why.push_back(fmt::format("{:.0f} requests refused as too long", p.rejected));
  if (p.failed > 0) why.push_back(fmt::format("{:g} failed requests", p.failed));
  if (const ClassAttainment* c = Limiting(p)) {
    std::string w = c->total > 0 ? fmt::format("{} {} at {:.1f}% of the {:g}% needed", c->class_name,
                                               VerdictName(c->verdict), 100 * c->attainment, 100 * c->required)
                                 : fmt::format("{} has no measured request", c->class_name);
    if (!c->slo_worst.empty()) w += " (nearest target: " + c->slo_worst + ")";
    why.push_back(w);
  }
  std::string out = "at " + p.label + Unit(p);
  for (size_t i = 0; i < why.size(); ++i) out += (i ? "; " : ": ") + why[i];
  return out;
}

std::vector<std::string> Reasons(const SearchResult& search, const SearchSpace& space, const Setting& chosen) {
  std::vector<std::string> out;
  const Evaluation* own = Best(search.evaluations, chosen);
  if (!own || !own->runs()) return out;
  for (const Dimension& d : space.dimensions) {
    if (chosen.Find(d.flag)) out.push_back(FlagReason(search, *own, d));
  }
  return out;
}

}  // namespace goodput
