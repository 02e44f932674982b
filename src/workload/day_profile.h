// A day (or any stretch of time) as a rate profile: each class gives its
// requests/s for consecutive steps of one length ("profile_step: 1h",
// "profile: [0.4, 0.3, ...]"), and its requests arrive as a Poisson process
// whose rate is that step's. The simulator runs the whole profile on its
// virtual clock, so a day takes seconds.
//
// The source's first remedy for offline work that hurts interactive traffic
// is to run it at other hours; WithOfflineInQuietSteps is that move.
#pragma once

#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "core/status.h"
#include "workload/workload.h"

namespace goodput {

// Profiles may be this long (a year of hours, or a day of 10-second steps).
constexpr size_t kMaxProfileSteps = 10'000;

// A class's "profile: [r0, r1, ...]": rates in requests/s, each finite and in
// [0, 1e6], at least one positive, at most kMaxProfileSteps. Errors name
// `where` and the node's line.
Result<std::vector<double>> ParseRateProfile(const YAML::Node& n, const std::string& where);

// Checks a parsed workload with profile_step_s > 0 (and the profile fields of
// one without): every class gives a profile of the same length and neither a
// share, rate nor concurrency of its own; no 'arrival' section; warm-up and
// cool-down as durations; the profile's expected requests within
// kMaxRequests. Sets the arrival kind to kProfile and, when the file gave
// none, the request budget to kMaxRequests (the profile's end ends the run).
// `root` is the document, for error lines.
Status FinishProfile(const YAML::Node& root, const std::string& where, bool requests_given, Workload& w);

// Expected requests over the whole profile: sum of rate x step over classes.
double ExpectedProfileRequests(const Workload& w);

// The busiest step (0-based): the highest rate over the classes that are
// not offline, the first of equals. Requires a profile.
int PeakStep(const Workload& w);

// The steps whose rate over the classes that are not offline is at most the
// median step's: the quiet hours. Empty for a workload without a profile.
std::vector<bool> QuietSteps(const Workload& w);

// `w` with each offline class's requests (its profile's expected count)
// spread evenly over the quiet steps (QuietSteps) instead of as given.
// Requires a profile.
Workload WithOfflineInQuietSteps(const Workload& w);

// A time into the profile as a clock time from its start: "13:00" (hours
// past 24 go on: "25:30").
std::string ClockTime(double seconds);

// The runs of consecutive steps set in `steps`: as clock times from the
// profile's start when `step_s` is whole minutes ("00:00-07:00, 19:00-24:00"),
// else by 1-based step number ("steps 1-7, 20-24").
std::string DescribeSteps(const std::vector<bool>& steps, double step_s);

}  // namespace goodput
