#include "calibrate/loop_fit.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "core/stats.h"

namespace goodput {
namespace {

struct Sample {
  int requests = 0;  // in the step the time follows
  double seconds = 0;
  int rank = 0;      // a follow-up's place among its step's, by arrival
};

constexpr size_t kMinSamples = 20;
constexpr size_t kSpreadQuantiles = 20;
// In the proof bench's logs closed loops paired 70-100% of their finishes,
// open loops 3-6% (chance arrivals).
constexpr double kClosedLoopShare = 0.5;
// A closed-loop client's next request reached goodput serve within 16 ms of
// the finish at the 99th percentile (33 ms at most) in those logs; an open
// loop's arrival after an idle engine comes at any time, and would pair.
constexpr double kFollowUpWindow = 0.03;

double End(const LoggedStep& s) { return s.start + s.seconds; }

// A request of step k that did not finish runs in step k + 1: the engine went
// on at once. Requests are told apart by their arrival times.
bool FollowedAtOnce(const LoggedStep& step, const LoggedStep& next) {
  std::set<double> continuing;
  for (const StepRequest& r : step.requests) {
    if (!r.finished) continuing.insert(r.arrival);
  }
  return std::any_of(next.requests.begin(), next.requests.end(),
                     [&](const StepRequest& r) { return continuing.count(r.arrival) > 0; });
}

void AddGaps(const std::vector<LoggedStep>& log, std::vector<Sample>& gaps) {
  for (size_t k = 0; k + 1 < log.size(); ++k) {
    const double gap = log[k + 1].start - End(log[k]);
    if (gap >= 0 && FollowedAtOnce(log[k], log[k + 1])) {
      gaps.push_back({static_cast<int>(log[k].requests.size()), gap});
    }
  }
}

// Pairs each step's finishes with the first new arrivals after its end,
// before the next step's end and within the window; adds the pairs if the
// log is a closed loop.
bool AddFollowUps(const std::vector<LoggedStep>& log, std::vector<Sample>& follow_ups) {
  std::set<double> arrivals;
  for (const LoggedStep& s : log) {
    for (const StepRequest& r : s.requests) arrivals.insert(r.arrival);
  }
  std::vector<Sample> pairs;
  int64_t finishes = 0;
  for (size_t k = 0; k + 1 < log.size(); ++k) {
    const auto finished = std::count_if(log[k].requests.begin(), log[k].requests.end(),
                                        [](const StepRequest& r) { return r.finished; });
    finishes += finished;
    const double end = End(log[k]), until = std::min(End(log[k + 1]), end + kFollowUpWindow);
    auto a = arrivals.upper_bound(end);
    for (int i = 0; i < finished && a != arrivals.end() && *a <= until; ++i, ++a) {
      pairs.push_back({static_cast<int>(log[k].requests.size()), *a - end, i});
    }
  }
  if (finishes == 0 || static_cast<double>(pairs.size()) < kClosedLoopShare * static_cast<double>(finishes)) {
    return false;
  }
  follow_ups.insert(follow_ups.end(), pairs.begin(), pairs.end());
  return true;
}

int RequestBucket(int requests) {
  int bucket = 0;
  while ((1 << bucket) < requests) ++bucket;
  return bucket;
}

// One bucket of samples: its mean requests and rank, its median time.
struct BucketMedian {
  double requests = 0, rank = 0, seconds = 0, weight = 0;
};

std::vector<BucketMedian> BucketMedians(const std::vector<Sample>& samples) {
  std::map<std::pair<int, int>, std::vector<Sample>> buckets;
  for (const Sample& s : samples) buckets[{RequestBucket(s.requests), std::min(s.rank, 3)}].push_back(s);
  std::vector<BucketMedian> out;
  for (const auto& [key, in] : buckets) {
    BucketMedian m;
    std::vector<double> times;
    for (const Sample& s : in) {
      times.push_back(s.seconds);
      m.requests += s.requests;
      m.rank += s.rank;
    }
    m.weight = static_cast<double>(in.size());
    m.requests /= m.weight;
    m.rank /= m.weight;
    m.seconds = *Median(times);
    out.push_back(m);
  }
  return out;
}

// Weighted least squares of the bucket medians on 1 and the regressors
// `use` picks (requests, rank): the normal equations, solved by Cramer's rule
// (3 x 3 at most: no library call would be shorter). False when they are
// singular or a coefficient comes out negative.
bool SolveLine(const std::vector<BucketMedian>& ms, const bool use[2], LoopTime& t) {
  double a[3][3] = {}, y[3] = {};
  for (const BucketMedian& m : ms) {
    const double x[3] = {1, use[0] ? m.requests : 0, use[1] ? m.rank : 0};
    for (int i = 0; i < 3; ++i) {
      y[i] += m.weight * x[i] * m.seconds;
      for (int j = 0; j < 3; ++j) a[i][j] += m.weight * x[i] * x[j];
    }
  }
  for (int i = 1; i < 3; ++i) {
    if (!use[i - 1]) a[i][i] = 1;  // that coefficient stays 0
  }
  const auto det = [](const double m[3][3]) {
    return m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1]) - m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0]) +
           m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0]);
  };
  const double d = det(a);
  if (!(std::fabs(d) > 1e-9 * a[0][0] * a[1][1] * a[2][2])) return false;
  double coef[3];
  for (int c = 0; c < 3; ++c) {
    double m[3][3];
    for (int i = 0; i < 3; ++i) {
      for (int j = 0; j < 3; ++j) m[i][j] = j == c ? y[i] : a[i][j];
    }
    coef[c] = det(m) / d;
  }
  t.base_s = coef[0], t.per_request_s = coef[1], t.per_rank_s = coef[2];
  return t.base_s >= 0 && t.per_request_s >= 0 && t.per_rank_s >= 0;
}

// The median's line through the buckets' medians, weighted by their samples:
// on the step's requests and the follow-up's rank, else on one of them, else
// flat at the overall median (one load's log has one request count).
void FitMedianLine(const std::vector<Sample>& samples, LoopTime& t) {
  const std::vector<BucketMedian> ms = BucketMedians(samples);
  constexpr bool kRegressors[3][2] = {{true, true}, {false, true}, {true, false}};
  for (const auto& use : kRegressors) {
    if (SolveLine(ms, use, t)) return;
  }
  std::vector<double> all;
  for (const Sample& s : samples) all.push_back(s.seconds);
  t = LoopTime{*Median(all), 0, 0, {}};
}

std::optional<LoopTime> FitLoopTime(const std::vector<Sample>& samples) {
  if (samples.size() < kMinSamples) return std::nullopt;
  LoopTime t;
  FitMedianLine(samples, t);
  std::vector<double> ratios;
  for (const Sample& s : samples) {
    const double median = t.Median(s.requests, s.rank);
    if (median > 0) ratios.push_back(s.seconds / median);
  }
  if (ratios.size() < kMinSamples) return t;  // (a median of zero: no spread to scale)
  std::vector<double> ps;
  for (size_t i = 0; i < kSpreadQuantiles; ++i) ps.push_back(100.0 * (i + 0.5) / kSpreadQuantiles);
  for (const auto& q : Percentiles(ratios, ps)) t.spread.push_back(*q);
  return t;
}

}  // namespace

EngineLoopFit FitEngineLoop(const std::vector<std::vector<LoggedStep>>& logs) {
  std::vector<Sample> gaps, follow_ups;
  EngineLoopFit fit;
  for (const auto& log : logs) {
    if (log.empty() || !log.front().timed) continue;
    AddGaps(log, gaps);
    fit.closed_logs += AddFollowUps(log, follow_ups) ? 1 : 0;
  }
  fit.gaps = static_cast<int64_t>(gaps.size());
  fit.follow_ups = static_cast<int64_t>(follow_ups.size());
  if (auto t = FitLoopTime(gaps)) fit.loop.between_steps = *t;
  if (auto t = FitLoopTime(follow_ups)) fit.loop.follow_up = *t;
  fit.loop.measured = gaps.size() >= kMinSamples || follow_ups.size() >= kMinSamples;
  return fit;
}

}  // namespace goodput
