#include "calibrate/loop_fit.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <optional>
#include <set>

#include "core/stats.h"

namespace goodput {
namespace {

struct Sample {
  int requests = 0;  // in the step the time follows
  double seconds = 0;  // the time; for a race, 1 if the follow-up joined the next step, else 0
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

// For each step but the last, whether the next step followed it at once.
std::vector<bool> FollowedAtOnceByStep(const std::vector<LoggedStep>& log) {
  std::vector<bool> out;
  for (size_t k = 0; k + 1 < log.size(); ++k) out.push_back(FollowedAtOnce(log[k], log[k + 1]));
  return out;
}

void AddGaps(const std::vector<LoggedStep>& log, const std::vector<bool>& followed, std::vector<Sample>& gaps) {
  for (size_t k = 0; k + 1 < log.size(); ++k) {
    const double gap = log[k + 1].start - End(log[k]);
    if (gap >= 0 && followed[k]) {
      gaps.push_back({static_cast<int>(log[k].requests.size()), gap});
    }
  }
}

// A follow-up, paired with the finish before it.
struct FollowUp {
  int requests = 0;   // in the finishing step
  int rank = 0;       // its place among that step's follow-ups, by arrival
  bool busy = false;  // the engine had other work: it raced the next step
  double after_next_start = 0;  // <= 0: it joined that step
};

// Pairs each step's finishes with the first new arrivals after its end,
// before the next step's end and within the window. Empty if the log is not
// a closed loop.
std::vector<FollowUp> PairFollowUps(const std::vector<LoggedStep>& log, const std::vector<bool>& followed) {
  std::set<double> arrivals;
  for (const LoggedStep& s : log) {
    for (const StepRequest& r : s.requests) arrivals.insert(r.arrival);
  }
  std::vector<FollowUp> pairs;
  int64_t finishes = 0;
  for (size_t k = 0; k + 1 < log.size(); ++k) {
    const auto finished = std::count_if(log[k].requests.begin(), log[k].requests.end(),
                                        [](const StepRequest& r) { return r.finished; });
    finishes += finished;
    const double end = End(log[k]), next = log[k + 1].start;
    const double until = std::min(End(log[k + 1]), end + kFollowUpWindow);
    auto a = arrivals.upper_bound(end);
    for (int i = 0; i < finished && a != arrivals.end() && *a <= until; ++i, ++a) {
      pairs.push_back({static_cast<int>(log[k].requests.size()), i, followed[k], *a - next});
    }
  }
  if (finishes == 0 || static_cast<double>(pairs.size()) < kClosedLoopShare * static_cast<double>(finishes)) {
    return {};
  }
  return pairs;
}

int RequestBucket(int requests) {
  int bucket = 0;
  while ((1 << bucket) < requests) ++bucket;
  return bucket;
}

// One bucket of samples: its mean regressors (requests, or their log2 for a
// chance; rank) and its median time (or mean share), weighted by its samples.
struct BucketPoint {
  double x = 0, rank = 0, y = 0, weight = 0;
};

std::vector<BucketPoint> Buckets(const std::vector<Sample>& samples, bool shares) {
  std::map<std::pair<int, int>, std::vector<Sample>> buckets;
  for (const Sample& s : samples) buckets[{RequestBucket(s.requests), std::min(s.rank, 3)}].push_back(s);
  std::vector<BucketPoint> out;
  for (const auto& [key, in] : buckets) {
    BucketPoint m;
    std::vector<double> ys;
    for (const Sample& s : in) {
      ys.push_back(s.seconds);
      m.x += shares ? std::log2(static_cast<double>(std::max(s.requests, 1))) : s.requests;
      m.rank += s.rank;
    }
    m.weight = static_cast<double>(in.size());
    m.x /= m.weight;
    m.rank /= m.weight;
    m.y = shares ? *Mean(ys) : *Median(ys);
    out.push_back(m);
  }
  return out;
}

// Weighted least squares of the buckets' y on 1 and the regressors `use`
// picks (x, rank): the normal equations, solved by Cramer's rule (3 x 3 at
// most: no library call would be shorter). None when they are singular.
std::optional<std::array<double, 3>> SolveLine(const std::vector<BucketPoint>& ps, const bool use[2]) {
  double a[3][3] = {}, y[3] = {};
  for (const BucketPoint& p : ps) {
    const double x[3] = {1, use[0] ? p.x : 0, use[1] ? p.rank : 0};
    for (int i = 0; i < 3; ++i) {
      y[i] += p.weight * x[i] * p.y;
      for (int j = 0; j < 3; ++j) a[i][j] += p.weight * x[i] * x[j];
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
  if (!(std::fabs(d) > 1e-9 * a[0][0] * a[1][1] * a[2][2])) return std::nullopt;
  std::array<double, 3> coef;
  for (int c = 0; c < 3; ++c) {
    double m[3][3];
    for (int i = 0; i < 3; ++i) {
      for (int j = 0; j < 3; ++j) m[i][j] = j == c ? y[i] : a[i][j];
    }
    coef[c] = det(m) / d;
  }
  return coef;
}

// The line through the buckets on both regressors, else on one of them, that
// `accept` takes; none when no line fits (one load's log has one request
// count), and the caller goes flat.
constexpr bool kRegressors[3][2] = {{true, true}, {false, true}, {true, false}};

template <typename Accept>
std::optional<std::array<double, 3>> FitLine(const std::vector<BucketPoint>& ps, Accept accept) {
  for (const auto& use : kRegressors) {
    if (auto c = SolveLine(ps, use); c && accept(*c)) return c;
  }
  return std::nullopt;
}

// The median's line, rising with the step's requests and the rank.
void FitMedianLine(const std::vector<Sample>& samples, LoopTime& t) {
  const auto c = FitLine(Buckets(samples, false), [](const std::array<double, 3>& c) {
    return c[0] >= 0 && c[1] >= 0 && c[2] >= 0;
  });
  if (c) {
    t = LoopTime{(*c)[0], (*c)[1], (*c)[2], {}};
    return;
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

// The chance's line through the shares of joins (1) and misses (0) of the
// buckets of 10 races or more, on the log2 of the step's requests and the
// rank, falling with both (in the proof bench's logs it falls from 0.8 at 2
// clients to 0.35 at 32, and by 0.1 a rank at 32); else the overall share. A
// share is noisier than a median: a bucket of a few races at the end of a
// run, or one load's narrow range of requests, would tilt a free line.
std::optional<JoinChance> FitJoinChance(const std::vector<Sample>& races) {
  if (races.size() < kMinSamples) return std::nullopt;
  std::vector<BucketPoint> shares = Buckets(races, true);
  shares.erase(std::remove_if(shares.begin(), shares.end(), [](const BucketPoint& p) { return p.weight < 10; }),
               shares.end());
  if (auto c = FitLine(shares, [](const std::array<double, 3>& c) { return c[1] <= 0 && c[2] <= 0; })) {
    return JoinChance{(*c)[0], (*c)[1], (*c)[2]};
  }
  std::vector<double> all;
  for (const Sample& s : races) all.push_back(s.seconds);
  return JoinChance{*Mean(all), 0, 0};
}

}  // namespace

EngineLoopFit FitEngineLoop(const std::vector<std::vector<LoggedStep>>& logs) {
  std::vector<Sample> gaps, races, late;
  EngineLoopFit fit;
  for (const auto& log : logs) {
    if (log.empty() || !log.front().timed) continue;
    const std::vector<bool> followed = FollowedAtOnceByStep(log);
    AddGaps(log, followed, gaps);
    const std::vector<FollowUp> pairs = PairFollowUps(log, followed);
    fit.closed_logs += pairs.empty() ? 0 : 1;
    fit.follow_ups += static_cast<int64_t>(pairs.size());
    for (const FollowUp& f : pairs) {
      if (!f.busy) continue;
      const bool joined = f.after_next_start <= 0;
      races.push_back({f.requests, joined ? 1.0 : 0.0, f.rank});
      if (!joined) late.push_back({f.requests, f.after_next_start, f.rank});
      fit.joined += joined ? 1 : 0;
    }
  }
  fit.gaps = static_cast<int64_t>(gaps.size());
  fit.races = static_cast<int64_t>(races.size());
  if (auto t = FitLoopTime(gaps)) fit.loop.between_steps = *t;
  if (auto c = FitJoinChance(races)) fit.loop.join = *c;
  if (auto t = FitLoopTime(late)) fit.loop.late_follow_up = *t;
  fit.loop.measured = gaps.size() >= kMinSamples || races.size() >= kMinSamples;
  return fit;
}

}  // namespace goodput
