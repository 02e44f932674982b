#include "measure/ranking.h"

#include <algorithm>
#include <cmath>

namespace goodput {

SettingScore ScoreSweep(const SweepResult& sweep, std::optional<int64_t> memory_headroom, int changed_flags) {
  SettingScore s;
  s.memory_headroom = memory_headroom;
  s.changed_flags = changed_flags;
  for (const PointResult& p : sweep.points) {
    for (const ClassAttainment& c : p.classes) s.judged = s.judged || c.has_slo;
  }
  if (!s.judged) {
    for (const PointResult& p : sweep.points) s.throughput = std::max(s.throughput, p.throughput);
    return s;
  }
  if (!sweep.capacity) {
    // Nothing held: how near the lowest load came is what tells such settings apart.
    if (!sweep.points.empty()) s.slo_margin = sweep.points.front().slo_margin;
    return s;
  }
  const PointResult& cap = sweep.points[*sweep.capacity];
  const bool closed = cap.load.kind == ArrivalKind::kClosedLoop;
  s.capacity = closed ? static_cast<double>(cap.load.concurrency) : cap.load.rate;
  s.capacity_resolution = closed ? 0 : 0.05;  // the rate search bisects to 5%
  s.goodput = cap.goodput;
  s.throughput = cap.throughput;
  s.slo_margin = cap.slo_margin;
  return s;
}

const char* RankCriterionName(RankCriterion c) {
  switch (c) {
    case RankCriterion::kCapacity:
      return "capacity";
    case RankCriterion::kGoodput:
      return "goodput";
    case RankCriterion::kThroughput:
      return "throughput";
    case RankCriterion::kSloMargin:
      return "SLO margin";
    case RankCriterion::kMemoryHeadroom:
      return "memory headroom";
    case RankCriterion::kChangedFlags:
      return "fewer changed flags";
    case RankCriterion::kTie:
      return "tie (given order)";
  }
  return "?";
}

namespace {

// +1 when x is above y by more than `relative` of the larger, -1 below, 0 within.
int Relative(double x, double y, double relative) {
  const double scale = std::max(std::abs(x), std::abs(y));
  if (std::abs(x - y) <= relative * scale) return 0;
  return x > y ? 1 : -1;
}

int Absolute(double x, double y, double tolerance) {
  if (std::isnan(x) || std::isnan(y)) return std::isnan(x) == std::isnan(y) ? 0 : (std::isnan(y) ? 1 : -1);
  if (std::abs(x - y) <= tolerance) return 0;
  return x > y ? 1 : -1;
}

int Capacity(const SettingScore& a, const SettingScore& b) {
  if (!a.capacity || !b.capacity) return a.capacity.has_value() - b.capacity.has_value();
  return Relative(*a.capacity, *b.capacity, std::max(a.capacity_resolution, b.capacity_resolution));
}

int Headroom(const SettingScore& a, const SettingScore& b, double tolerance) {
  if (!a.memory_headroom || !b.memory_headroom) return 0;
  return Relative(static_cast<double>(*a.memory_headroom), static_cast<double>(*b.memory_headroom), tolerance);
}

}  // namespace

ScoreOrder CompareScores(const SettingScore& a, const SettingScore& b, const RankTolerance& t) {
  const bool judged = a.judged || b.judged;
  const std::pair<RankCriterion, int> criteria[] = {
      {RankCriterion::kCapacity, judged ? Capacity(a, b) : 0},
      {judged ? RankCriterion::kGoodput : RankCriterion::kThroughput,
       judged ? Relative(a.goodput, b.goodput, t.goodput) : Relative(a.throughput, b.throughput, t.goodput)},
      {RankCriterion::kSloMargin, judged ? Absolute(a.slo_margin, b.slo_margin, t.slo_margin) : 0},
      {RankCriterion::kMemoryHeadroom, Headroom(a, b, t.memory_headroom)},
      {RankCriterion::kChangedFlags, b.changed_flags > a.changed_flags   ? 1
                                     : b.changed_flags < a.changed_flags ? -1
                                                                         : 0},
  };
  for (const auto& [criterion, sign] : criteria) {
    if (sign != 0) return ScoreOrder{sign, criterion};
  }
  return ScoreOrder{};
}

Ranking RankScores(const std::vector<SettingScore>& scores, const RankTolerance& t) {
  // Insertion after the last setting that is not below the new one: the
  // tolerances make the comparison intransitive, which std::sort may not
  // be given; the lists are short.
  Ranking r;
  for (size_t i = 0; i < scores.size(); ++i) {
    size_t at = r.order.size();
    while (at > 0 && CompareScores(scores[i], scores[r.order[at - 1]], t).sign > 0) --at;
    r.order.insert(r.order.begin() + static_cast<std::ptrdiff_t>(at), i);
  }
  for (size_t k = 0; k < r.order.size(); ++k) {
    r.above_next.push_back(k + 1 < r.order.size() ? CompareScores(scores[r.order[k]], scores[r.order[k + 1]], t).by
                                                  : RankCriterion::kTie);
  }
  return r;
}

}  // namespace goodput
