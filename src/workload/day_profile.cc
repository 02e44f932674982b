#include "workload/day_profile.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "workload/yaml_input.h"

namespace goodput {
namespace {

constexpr double kMaxProfileRate = 1e6;  // requests/s, as a class's own rate

// A class of a profile workload that also gives a load of its own, or a
// margin given as a share: the error, or Ok.
Status CheckProfileClass(const YAML::Node& n, const std::string& where, const RequestClass& c, size_t steps) {
  for (const char* key : {"share", "rate", "concurrency"}) {
    if (n[key]) {
      return YamlError(where, n[key],
                       fmt::format("class '{}': '{}' and 'profile' both set its load; keep the profile", c.name, key));
    }
  }
  if (c.profile.empty()) {
    return YamlError(where, n, fmt::format("class '{}' needs a 'profile' (the workload has 'profile_step')", c.name));
  }
  if (c.profile.size() != steps) {
    return YamlError(where, n["profile"],
                     fmt::format("class '{}': its profile has {} steps, the first class's {}; give every class the "
                                 "same steps",
                                 c.name, c.profile.size(), steps));
  }
  return Status::Ok();
}

// Without 'profile_step': no class may give a profile, and no arrival may
// claim one.
Status CheckNoProfile(const YAML::Node& root, const std::string& where, const Workload& w) {
  const YAML::Node classes = root["classes"];
  for (size_t i = 0; i < w.classes.size(); ++i) {
    if (!w.classes[i].profile.empty()) {
      return YamlError(where, classes[i]["profile"],
                       fmt::format("class '{}': 'profile' needs the workload's 'profile_step' (e.g. profile_step: 1h)",
                                   w.classes[i].name));
    }
  }
  if (w.arrival.kind == ArrivalKind::kProfile) {
    return YamlError(where, root["arrival"],
                     "arrival type 'profile' comes from 'profile_step' and the classes' "
                     "profiles; drop the 'arrival' section");
  }
  return Status::Ok();
}

}  // namespace

Result<std::vector<double>> ParseRateProfile(const YAML::Node& n, const std::string& where) {
  if (!n.IsSequence() || n.size() == 0) {
    return YamlError(where, n, "'profile' must list the rate (requests/s) of each step, e.g. [0.5, 0.4, 2]");
  }
  if (n.size() > kMaxProfileSteps) {
    return YamlError(where, n, fmt::format("'profile' has {} steps; at most {}", n.size(), kMaxProfileSteps));
  }
  std::vector<double> rates;
  for (const auto& r : n) {
    double v = -1;
    try {
      v = r.as<double>();
    } catch (const YAML::Exception&) {
    }
    if (!(v >= 0 && v <= kMaxProfileRate)) {  // also NaN
      return YamlError(where, r,
                       fmt::format("'profile' rates must be numbers from 0 to {:g} requests/s", kMaxProfileRate));
    }
    rates.push_back(v);
  }
  if (*std::max_element(rates.begin(), rates.end()) == 0) {
    return YamlError(where, n, "every rate of the 'profile' is 0: the class would never get a request");
  }
  return rates;
}

Status FinishProfile(const YAML::Node& root, const std::string& where, bool requests_given, Workload& w) {
  if (!w.HasProfile()) return CheckNoProfile(root, where, w);
  if (root["arrival"]) {
    return YamlError(where, root["arrival"],
                     "a workload with 'profile_step' takes its load from the classes' "
                     "profiles; drop the 'arrival' section");
  }
  if (w.warmup.fraction > 0 || w.cooldown.fraction > 0) {
    return YamlError(where, root[w.warmup.fraction > 0 ? "warmup" : "cooldown"],
                     "with 'profile_step', warm-up and cool-down are durations (e.g. 10m): the windows start at the "
                     "profile's start");
  }
  const size_t steps = w.classes[0].profile.size();
  const YAML::Node classes = root["classes"];
  for (size_t i = 0; i < w.classes.size(); ++i) {
    GOODPUT_RETURN_IF_ERROR(CheckProfileClass(classes[i], where, w.classes[i], steps));
  }
  const double expected = ExpectedProfileRequests(w);
  if (expected > static_cast<double>(kMaxRequests)) {
    return YamlError(where, root["profile_step"],
                     fmt::format("the profile asks for about {:.0f} requests; a run sends at most {} (a shorter "
                                 "'profile_step' keeps the shape with fewer)",
                                 expected, kMaxRequests));
  }
  w.arrival = ArrivalSpec{ArrivalKind::kProfile, 1, 1, 1};
  if (!requests_given) w.requests = kMaxRequests;
  return Status::Ok();
}

double ExpectedProfileRequests(const Workload& w) {
  double total = 0;
  for (const auto& c : w.classes) {
    for (double r : c.profile) total += r * w.profile_step_s;
  }
  return total;
}

namespace {

// Each step's rate over the classes that are not offline.
std::vector<double> BusyRates(const Workload& w) {
  std::vector<double> busy(w.ProfileSteps(), 0.0);
  for (const auto& c : w.classes) {
    if (c.offline) continue;
    for (size_t k = 0; k < busy.size(); ++k) busy[k] += c.profile[k];
  }
  return busy;
}

}  // namespace

int PeakStep(const Workload& w) {
  const std::vector<double> busy = BusyRates(w);
  return static_cast<int>(std::max_element(busy.begin(), busy.end()) - busy.begin());
}

std::vector<bool> QuietSteps(const Workload& w) {
  if (!w.HasProfile()) return {};
  const std::vector<double> busy = BusyRates(w);
  std::vector<double> sorted = busy;
  std::sort(sorted.begin(), sorted.end());
  const double median = sorted[(sorted.size() - 1) / 2];  // the lower median: ties stay quiet
  std::vector<bool> quiet(busy.size());
  for (size_t k = 0; k < busy.size(); ++k) quiet[k] = busy[k] <= median;
  return quiet;
}

Workload WithOfflineInQuietSteps(const Workload& w) {
  Workload out = w;
  const std::vector<bool> quiet = QuietSteps(w);
  const auto n_quiet = static_cast<double>(std::count(quiet.begin(), quiet.end(), true));
  for (auto& c : out.classes) {
    if (!c.offline) continue;
    double total = 0;  // requests/s x steps: the class's volume in step units
    for (double r : c.profile) total += r;
    for (size_t k = 0; k < c.profile.size(); ++k) c.profile[k] = quiet[k] ? total / n_quiet : 0;
  }
  return out;
}

std::string ClockTime(double seconds) {
  const auto minutes = static_cast<int64_t>(std::llround(seconds / 60));
  return fmt::format("{:02d}:{:02d}", minutes / 60, minutes % 60);
}

std::string DescribeSteps(const std::vector<bool>& steps, double step_s) {
  const bool clock = step_s > 0 && std::fmod(step_s, 60) == 0;
  const auto at = [&](size_t k) { return ClockTime(static_cast<double>(k) * step_s); };
  std::string out;
  for (size_t k = 0; k < steps.size(); ++k) {
    if (!steps[k] || (k > 0 && steps[k - 1])) continue;
    size_t end = k;
    while (end + 1 < steps.size() && steps[end + 1]) ++end;
    out += out.empty() ? "" : ", ";
    if (clock) {
      out += at(k) + "-" + at(end + 1);
    } else {
      out += end == k ? fmt::format("{}", k + 1) : fmt::format("{}-{}", k + 1, end + 1);
    }
  }
  if (clock) return out;
  return (out.find_first_of(",-") == std::string::npos ? "step " : "steps ") + out;
}

}  // namespace goodput
