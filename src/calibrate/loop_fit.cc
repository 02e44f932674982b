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
};

constexpr size_t kMinSamples = 20;
constexpr size_t kSpreadQuantiles = 20;
constexpr double kClosedLoopShare = 0.7;

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

// Pairs each step's finishes with the first new arrivals after its end and
// before the next step's end; adds the pairs if the log is a closed loop.
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
    const double end = End(log[k]), next_end = End(log[k + 1]);
    auto a = arrivals.upper_bound(end);
    for (int64_t i = 0; i < finished && a != arrivals.end() && *a <= next_end; ++i, ++a) {
      pairs.push_back({static_cast<int>(log[k].requests.size()), *a - end});
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

// The median's line: least squares through each bucket's (mean requests,
// median time), weighted by its samples; flat at the overall median when the
// times do not grow.
void FitMedianLine(const std::vector<Sample>& samples, LoopTime& t) {
  std::map<int, std::vector<Sample>> buckets;
  for (const Sample& s : samples) buckets[RequestBucket(s.requests)].push_back(s);
  double sw = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (const auto& [bucket, in] : buckets) {
    std::vector<double> times;
    double requests = 0;
    for (const Sample& s : in) {
      times.push_back(s.seconds);
      requests += s.requests;
    }
    const double w = static_cast<double>(in.size()), x = requests / w, y = *Median(times);
    sw += w, sx += w * x, sy += w * y, sxx += w * x * x, sxy += w * x * y;
  }
  const double det = sw * sxx - sx * sx;
  t.per_request_s = det > 1e-12 * sw * sxx ? (sw * sxy - sx * sy) / det : 0;
  t.base_s = (sy - t.per_request_s * sx) / sw;
  if (t.per_request_s < 0 || t.base_s < 0) {
    std::vector<double> all;
    for (const Sample& s : samples) all.push_back(s.seconds);
    t.base_s = *Median(all);
    t.per_request_s = 0;
  }
}

std::optional<LoopTime> FitLoopTime(const std::vector<Sample>& samples) {
  if (samples.size() < kMinSamples) return std::nullopt;
  LoopTime t;
  FitMedianLine(samples, t);
  std::vector<double> ratios;
  for (const Sample& s : samples) {
    const double median = t.Median(s.requests);
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
