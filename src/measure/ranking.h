// How engine settings are ranked (`--vary`, `goodput tune`): a setting is
// compared with another by its capacity, the highest load at which every
// class holds its SLO; then by goodput at that load; then by how far inside
// its SLO the capacity point is (its SLO margin); then by the memory the
// engine leaves unallocated; then by how few flags it changes from the
// baseline. Without any SLO (an offline endpoint) the served throughput takes
// the place of capacity and goodput. Each criterion has a tolerance (figures
// closer than it tie, and the next criterion decides), and the ranking says
// which criterion put each setting above the next.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "measure/ladder.h"

namespace goodput {

struct SettingScore {
  bool judged = false;                     // some class has an SLO
  std::optional<double> capacity;          // the capacity's load (clients or requests/s); empty: none held
  double capacity_resolution = 0;          // relative: capacities closer than this tie (a rate search's 5%)
  double goodput = 0;                      // requests/s at capacity
  double throughput = 0;                   // output tokens/s: at capacity, or (no SLO) the most any load served
  double slo_margin = kNoValue;            // at capacity (PointResult::slo_margin); none held: at the lowest load
  std::optional<int64_t> memory_headroom;  // bytes the engine leaves unallocated
  int changed_flags = 0;                   // flags that differ from the baseline's values
};

// The score of a ladder or capacity search, with the target's memory
// headroom and the count of flags the setting changes.
SettingScore ScoreSweep(const SweepResult& sweep, std::optional<int64_t> memory_headroom = std::nullopt,
                        int changed_flags = 0);

enum class RankCriterion { kCapacity, kGoodput, kThroughput, kSloMargin, kMemoryHeadroom, kChangedFlags, kTie };
// "capacity", "goodput", "throughput", "SLO margin", "memory headroom",
// "fewer changed flags", "tie (given order)".
const char* RankCriterionName(RankCriterion c);

// Figures closer than these tie (relative for goodput and throughput,
// absolute for the margin, which is already a share of the threshold).
struct RankTolerance {
  double goodput = 0.02;
  double slo_margin = 0.02;
  double memory_headroom = 0.02;
};

// +1 when `a` ranks above `b`, -1 below, 0 when every criterion ties; and
// the criterion that decided (kTie when none did).
struct ScoreOrder {
  int sign = 0;
  RankCriterion by = RankCriterion::kTie;
};
ScoreOrder CompareScores(const SettingScore& a, const SettingScore& b, const RankTolerance& tolerance = {});

struct Ranking {
  std::vector<size_t> order;              // indices into the scores, best first; ties keep the given order
  std::vector<RankCriterion> above_next;  // per rank: what put it above the next (the last: kTie)
};
Ranking RankScores(const std::vector<SettingScore>& scores, const RankTolerance& tolerance = {});

}  // namespace goodput
