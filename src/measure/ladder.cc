#include "measure/ladder.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include <fmt/format.h>

namespace goodput {

Result<std::vector<double>> ParseLoadList(const std::string& text, const char* flag) {
  std::vector<double> out;
  size_t start = 0;
  for (size_t i = 0; i <= text.size(); ++i) {
    if (i < text.size() && text[i] != ',') continue;
    const std::string item = text.substr(start, i - start);
    start = i + 1;
    char* end = nullptr;
    const double v = std::strtod(item.c_str(), &end);
    if (item.empty() || *end != '\0' || !(v > 0)) {
      return Status::InvalidArgument(fmt::format("{}: '{}' is not a positive number", flag, item));
    }
    out.push_back(v);
  }
  return out;
}

Result<std::vector<ArrivalSpec>> Ladder(const std::string& concurrency, const std::string& rate,
                                        std::optional<double> burstiness, const Workload& w) {
  if (!concurrency.empty() && !rate.empty()) return Status::InvalidArgument("give --concurrency or --rate, not both");
  std::vector<ArrivalSpec> out;
  if (!concurrency.empty()) {
    GOODPUT_ASSIGN_OR_RETURN(std::vector<double> cs, ParseLoadList(concurrency, "--concurrency"));
    for (double c : cs) {
      if (c != std::floor(c)) {
        return Status::InvalidArgument(fmt::format("--concurrency: '{:g}' is not a whole number of clients", c));
      }
      if (c > kMaxConcurrency) {
        return Status::InvalidArgument(fmt::format("--concurrency: {:g} clients; at most {}", c, kMaxConcurrency));
      }
      out.push_back(ArrivalSpec{ArrivalKind::kClosedLoop, static_cast<int>(c), 1, 1});
    }
  } else if (!rate.empty()) {
    GOODPUT_ASSIGN_OR_RETURN(std::vector<double> rs, ParseLoadList(rate, "--rate"));
    if (burstiness && !(*burstiness > 0)) return Status::InvalidArgument("--burstiness must be positive");
    const double shape = burstiness.value_or(w.arrival.kind == ArrivalKind::kGamma ? w.arrival.burstiness : 1);
    const ArrivalKind kind = shape == 1 ? ArrivalKind::kPoisson : ArrivalKind::kGamma;
    for (double r : rs) {
      if (!(r >= kMinRate && r <= kMaxRate)) {
        return Status::InvalidArgument(fmt::format("--rate: {:g} requests/s; {:g} to {:g}", r, kMinRate, kMaxRate));
      }
      out.push_back(ArrivalSpec{kind, 1, r, shape});
    }
  } else {
    out.push_back(w.arrival);
  }
  return out;
}

double LoadOf(const PointResult& p) {
  return p.load.kind == ArrivalKind::kClosedLoop ? p.load.concurrency : p.load.rate;
}

std::optional<size_t> LadderCapacity(const std::vector<PointResult>& ladder) {
  std::optional<size_t> best;
  for (size_t i = 0; i < ladder.size(); ++i) {
    if (ladder[i].verdict == Verdict::kFails) break;
    if (ladder[i].holds()) best = i;
  }
  return best;
}

namespace {

// Halves down from the failing `hi` until a load holds; that load, or 0 when
// none down to the floor did.
Result<double> ProbeDown(const std::function<Result<bool>(double)>& probe, double& hi, bool integer) {
  const double floor_load = integer ? 1 : hi / 64;
  while (hi > floor_load) {
    const double load = integer ? std::max(1.0, std::floor(hi / 2)) : std::max(floor_load, hi / 2);
    GOODPUT_ASSIGN_OR_RETURN(bool ok, probe(load));
    if (ok) return load;
    hi = load;
  }
  return 0.0;
}

}  // namespace

Result<CapacitySearch> SearchCapacity(const std::function<Result<PointResult>(double)>& run, double start, double max,
                                      bool integer, double resolution) {
  CapacitySearch s;
  const std::function<Result<bool>(double)> probe = [&](double load) -> Result<bool> {
    auto p = run(load);
    if (!p.ok()) return p.status();
    s.probes.push_back(*p);
    if (p->holds() && (!s.capacity || LoadOf(*p) > LoadOf(*s.capacity))) s.capacity = *p;
    return p->holds();
  };
  double lo = 0, hi = 0;
  for (double load = start;; load = std::min(max, load * 2)) {
    GOODPUT_ASSIGN_OR_RETURN(bool ok, probe(load));
    if (!ok) {
      hi = load;
      break;
    }
    lo = load;
    if (load >= max) {
      s.capped = true;
      return s;
    }
  }
  if (lo == 0) {
    GOODPUT_ASSIGN_OR_RETURN(lo, ProbeDown(probe, hi, integer));
    if (lo == 0) return s;  // even the lowest load fails
  }
  const double share = resolution > 0 ? resolution : (integer ? 0 : 0.05);
  while (integer ? hi - lo > std::max(1.0, share * lo) : hi / lo > 1 + share) {
    const double mid = integer ? std::floor((lo + hi) / 2) : std::sqrt(lo * hi);
    GOODPUT_ASSIGN_OR_RETURN(bool ok, probe(mid));
    (ok ? lo : hi) = mid;
  }
  return s;
}

Result<SweepResult> RunLadder(const PointRunner& run, const std::vector<ArrivalSpec>& ladder, bool stop_at_first_miss) {
  SweepResult out;
  for (const auto& load : ladder) {
    GOODPUT_ASSIGN_OR_RETURN(PointResult r, run(load));
    const bool fails = r.verdict == Verdict::kFails;
    out.points.push_back(std::move(r));
    if (stop_at_first_miss && fails) break;
  }
  out.capacity = LadderCapacity(out.points);
  out.capped = out.capacity && *out.capacity + 1 == out.points.size();
  return out;
}

Result<SweepResult> RunCapacitySearch(const PointRunner& run, const ArrivalSpec& base,
                                      const CapacitySearchOptions& options, int64_t requests_per_run) {
  const bool by_rate = base.kind != ArrivalKind::kClosedLoop;
  double max = options.max_load > 0 ? options.max_load : (by_rate ? 1000 : 4096);
  if (!by_rate) max = std::max(1.0, std::min(max, std::floor(requests_per_run / 2.0)));
  double start = options.start > 0 ? options.start : (by_rate ? base.rate : 1);
  start = std::min(start, max);
  if (!by_rate) start = std::max(1.0, std::floor(start));
  GOODPUT_ASSIGN_OR_RETURN(CapacitySearch search, SearchCapacity(
                                                       [&](double load) {
                                                         ArrivalSpec s = base;
                                                         if (by_rate) s.rate = load;
                                                         else s.concurrency = static_cast<int>(load);
                                                         return run(s);
                                                       },
                                                       start, max, !by_rate, options.resolution));
  SweepResult out;
  out.points = search.probes;
  std::sort(out.points.begin(), out.points.end(), [](const auto& x, const auto& y) { return LoadOf(x) < LoadOf(y); });
  for (size_t i = 0; i < out.points.size() && search.capacity; ++i) {
    if (LoadOf(out.points[i]) == LoadOf(*search.capacity)) out.capacity = i;
  }
  out.capped = search.capped;
  return out;
}

}  // namespace goodput
