#include "host_fit.h"

#include <fmt/format.h>

#include <cmath>
#include <tuple>

#include "core/stats.h"

namespace goodput::validation {

bool HostFactors::operator<(const HostFactors& o) const {
  return std::tie(step_overhead_s, per_sequence_s, frontend_latency_s, kernel_latency_s) <
         std::tie(o.step_overhead_s, o.per_sequence_s, o.frontend_latency_s, o.kernel_latency_s);
}

std::string HostFactors::Flags() const {
  return fmt::format("--step-overhead {:g} --per-request-cost {:g} --frontend-latency {:g} --kernel-latency {:g}",
                     step_overhead_s, per_sequence_s, frontend_latency_s, kernel_latency_s);
}

double MedianLogError(const std::vector<Outcome>& outcomes, const std::set<std::string>& sources) {
  std::vector<double> e;
  for (const Outcome& o : outcomes) {
    if (o.published.fitted.empty() && sources.count(o.row->source)) {
      e.push_back(std::fabs(std::log(o.simulated / o.published.value)));
    }
  }
  return Median(e).value_or(0);
}

HostFactors FitHostFactors(const HostGrid& grid, const EvaluateHost& evaluate, const std::set<std::string>& sources) {
  HostFactors best{grid.step_overhead_s.front(), grid.per_sequence_s.front(), grid.frontend_latency_s.front(),
                   grid.kernel_latency_s.front()};
  double best_error = MedianLogError(evaluate(best), sources);
  const std::vector<std::pair<const std::vector<double>*, double HostFactors::*>> axes = {
      {&grid.step_overhead_s, &HostFactors::step_overhead_s},
      {&grid.per_sequence_s, &HostFactors::per_sequence_s},
      {&grid.frontend_latency_s, &HostFactors::frontend_latency_s},
      {&grid.kernel_latency_s, &HostFactors::kernel_latency_s}};
  for (bool moved = true; moved;) {
    moved = false;
    for (const auto& [values, field] : axes) {
      for (double v : *values) {
        HostFactors h = best;
        h.*field = v;
        const double e = MedianLogError(evaluate(h), sources);
        if (e < best_error - 1e-12) best = h, best_error = e, moved = true;
      }
    }
  }
  return best;
}

std::map<std::string, HostFactors> LeaveOneSourceOut(const HostGrid& grid, const EvaluateHost& evaluate,
                                                     const std::set<std::string>& sources) {
  std::map<std::string, HostFactors> out;
  for (const std::string& left_out : sources) {
    std::set<std::string> others = sources;
    others.erase(left_out);
    out[left_out] = FitHostFactors(grid, evaluate, others);
  }
  return out;
}

}  // namespace goodput::validation
