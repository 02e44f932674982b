#include "sim/engine_loop.h"

#include <algorithm>
#include <cmath>

namespace goodput {

double LoopTime::Draw(int requests, double u, int rank) const {
  const double median = Median(requests, rank);
  if (spread.empty()) return median;
  const double n = static_cast<double>(spread.size());
  const double x = std::clamp(u * n - 0.5, 0.0, n - 1);  // spread[i] sits at quantile (i + 0.5) / n
  const size_t i = static_cast<size_t>(std::floor(x));
  const double ratio = i + 1 < spread.size() ? spread[i] + (x - i) * (spread[i + 1] - spread[i]) : spread[i];
  return median * ratio;
}

double JoinChance::At(int requests, int rank) const {
  const double doublings = std::log2(static_cast<double>(std::max(requests, 1)));
  return std::clamp(base + per_doubling * doublings + per_rank * rank, 0.0, 1.0);
}

}  // namespace goodput
