#include "tune/search.h"

#include <map>
#include <optional>

#include <fmt/format.h>

namespace goodput {

const char* FidelityName(Fidelity f) { return f == Fidelity::kScreen ? "screen" : "full"; }

std::vector<size_t> StartIndices(const SearchSpace& space) {
  std::vector<size_t> out;
  for (const Dimension& d : space.dimensions) out.push_back(d.ordered ? (d.values.size() - 1) / 2 : 0);
  return out;
}

void RankEvaluations(const std::vector<Evaluation>& evaluations, const std::vector<size_t>& indices,
                     const RankTolerance& tolerance, std::vector<size_t>& ranked,
                     std::vector<RankCriterion>& above_next) {
  std::vector<size_t> running;
  std::vector<SettingScore> scores;
  for (size_t i : indices) {
    if (!evaluations[i].runs()) continue;
    running.push_back(i);
    scores.push_back(evaluations[i].score);
  }
  const Ranking r = RankScores(scores, tolerance);
  ranked.clear();
  for (size_t k : r.order) ranked.push_back(running[k]);
  above_next = r.above_next;
}

namespace {

// Runs evaluations within the budget, each setting at most once per
// fidelity (a full one also answers for its screening).
class Searcher {
 public:
  Searcher(const SearchSpace& space, const Evaluator& evaluate, const SearchOptions& options)
      : space_(space), evaluate_(evaluate), options_(options) {}

  // The evaluation's index, or nullopt once the budget is spent.
  Result<std::optional<size_t>> Get(const std::vector<size_t>& indices, Fidelity f) {
    const Setting s = space_.At(indices);
    if (auto it = done_.find({s.Label(), Fidelity::kFull}); it != done_.end()) return std::optional(it->second);
    if (auto it = done_.find({s.Label(), f}); it != done_.end()) return std::optional(it->second);
    if (static_cast<int>(out_.evaluations.size()) >= options_.budget) {
      out_.budget_spent = true;
      return std::optional<size_t>();
    }
    GOODPUT_ASSIGN_OR_RETURN(Evaluation e, evaluate_(s, f));
    e.setting = s;
    e.fidelity = f;
    out_.evaluations.push_back(std::move(e));
    const size_t at = out_.evaluations.size() - 1;
    done_[{s.Label(), f}] = at;
    if (options_.progress) options_.progress(out_.evaluations[at], static_cast<int>(at) + 1, options_.budget);
    return std::optional(at);
  }

  // Whether evaluation `a` ranks above `b` (a setting that runs above one that does not).
  bool Better(size_t a, size_t b) const {
    const Evaluation &x = out_.evaluations[a], &y = out_.evaluations[b];
    if (!y.runs()) return x.runs();
    return x.runs() && CompareScores(x.score, y.score, options_.tolerance).sign > 0;
  }

  Status Grid();
  Status Descend();
  SearchResult Finish();

 private:
  Result<std::optional<size_t>> Line(size_t dim, const std::vector<size_t>& at, size_t current);

  const SearchSpace& space_;
  const Evaluator& evaluate_;
  const SearchOptions& options_;
  SearchResult out_;
  std::string start_label_;  // coordinate descent's first setting ("" for the grid)
  std::map<std::pair<std::string, Fidelity>, size_t> done_;
};

Status Searcher::Grid() {
  out_.method = fmt::format("every setting of the grid ({} settings, within the budget of {})", space_.GridSize(),
                            options_.budget);
  std::vector<size_t> at(space_.dimensions.size(), 0);
  while (true) {
    GOODPUT_ASSIGN_OR_RETURN(auto e, Get(at, Fidelity::kFull));
    if (!e) return Status::Ok();
    size_t d = at.size();
    while (d > 0 && ++at[d - 1] == space_.dimensions[d - 1].values.size()) at[--d] = 0;
    if (d == 0) return Status::Ok();
  }
}

// Along dimension `dim` from `at` (evaluated in full as `current`): every
// other value screened, the best `promote` measured in full; the best that
// ranks above `current`, if any.
Result<std::optional<size_t>> Searcher::Line(size_t dim, const std::vector<size_t>& at, size_t current) {
  std::vector<size_t> screened;
  std::vector<size_t> where = at;
  for (size_t v = 0; v < space_.dimensions[dim].values.size(); ++v) {
    if (v == at[dim]) continue;
    where[dim] = v;
    GOODPUT_ASSIGN_OR_RETURN(auto e, Get(where, Fidelity::kScreen));
    if (!e) break;
    screened.push_back(*e);
  }
  std::vector<size_t> ranked;
  std::vector<RankCriterion> unused;
  RankEvaluations(out_.evaluations, screened, options_.tolerance, ranked, unused);
  std::optional<size_t> best;
  for (size_t k = 0; k < ranked.size() && static_cast<int>(k) < options_.promote; ++k) {
    const Setting& s = out_.evaluations[ranked[k]].setting;
    where[dim] = 0;
    while (space_.dimensions[dim].values[where[dim]] != *s.Find(space_.dimensions[dim].flag)) ++where[dim];
    GOODPUT_ASSIGN_OR_RETURN(auto full, Get(where, Fidelity::kFull));
    if (!full) break;
    if (Better(*full, best.value_or(current))) best = *full;
  }
  return best;
}

Status Searcher::Descend() {
  std::vector<size_t> at = options_.start.empty() ? StartIndices(space_) : options_.start;
  start_label_ = space_.At(at).Label();
  GOODPUT_ASSIGN_OR_RETURN(auto current, Get(at, Fidelity::kFull));
  if (!current) return Status::Ok();
  for (bool moved = true; moved && !out_.budget_spent;) {
    moved = false;
    for (size_t d = 0; d < space_.dimensions.size() && !out_.budget_spent; ++d) {
      if (space_.dimensions[d].values.size() < 2) continue;
      GOODPUT_ASSIGN_OR_RETURN(auto better, Line(d, at, *current));
      if (!better) continue;
      current = better;
      const std::string& value = *out_.evaluations[*better].setting.Find(space_.dimensions[d].flag);
      while (space_.dimensions[d].values[at[d]] != value) at[d] = (at[d] + 1) % space_.dimensions[d].values.size();
      moved = true;
    }
  }
  return Status::Ok();
}

SearchResult Searcher::Finish() {
  std::vector<size_t> full;
  for (size_t i = 0; i < out_.evaluations.size(); ++i) {
    if (out_.evaluations[i].fidelity == Fidelity::kFull) full.push_back(i);
  }
  RankEvaluations(out_.evaluations, full, options_.tolerance, out_.ranked, out_.above_next);
  if (!start_label_.empty()) {
    out_.method = fmt::format(
        "coordinate descent with successive halving from {}: {} evaluations of the grid's {} "
        "settings (budget {})",
        start_label_, out_.evaluations.size(), space_.GridSize(), options_.budget);
  }
  return std::move(out_);
}

}  // namespace

Result<SearchResult> SearchSettings(const SearchSpace& space, const Evaluator& evaluate, const SearchOptions& options) {
  if (space.dimensions.empty()) return Status::InvalidArgument("the search space has no flag");
  if (options.budget < 1) return Status::InvalidArgument("the search's budget must be at least 1 evaluation");
  if (!options.start.empty() && options.start.size() != space.dimensions.size()) {
    return Status::InvalidArgument("the search's start names a value for each flag");
  }
  Searcher s(space, evaluate, options);
  GOODPUT_RETURN_IF_ERROR(space.GridSize() <= options.budget ? s.Grid() : s.Descend());
  return s.Finish();
}

}  // namespace goodput
