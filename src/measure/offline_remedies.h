// Offline work on a day profile, three ways: the source's two remedies for
// offline jobs that hurt interactive traffic (run them at other hours; or
// give interactive requests priority and cap the offline ones) beside the
// day as given, each class judged window by window.
#pragma once

#include <string>
#include <vector>

#include <boost/json/value.hpp>

#include "measure/measurement.h"

namespace goodput {

struct OfflineArrangement {
  std::string label;        // "as given", "offline in the quiet hours", ...
  std::string description;  // what changed, for people
  Workload workload;
  std::vector<Vary> flags;  // engine flags it sets, one value each
};

// The day as given; its offline classes' requests moved to the quiet steps
// (WithOfflineInQuietSteps); and as given under --scheduling-policy priority
// with --max-offline-seqs `offline_cap`. Errors: `w` has no profile, no
// offline class, or no class judged by windows (an SLO "... over 1h").
Result<std::vector<OfflineArrangement>> OfflineArrangements(const Workload& w, int offline_cap);

struct ArrangementResult {
  OfflineArrangement arrangement;
  SettingResult result;  // one point: the whole profile, repeated
};

// Measures each arrangement with `spec`'s load and repetitions (its
// workload and varied flags replaced by the arrangement's). Errors: those of
// OfflineArrangements and Measure; a spec that varies flags itself.
Result<std::vector<ArrangementResult>> CompareOfflineArrangements(const MeasurementSpec& spec, int offline_cap,
                                                                  const TargetFactory& make_target,
                                                                  const MeasurementHooks& hooks = {});

// Per arrangement and class: windows held of those judged, the deciding
// window and its attainment, the verdict; offline classes by requests and
// throughput; then each windowed class's verdict letters per window.
std::string FormatOfflineComparison(const std::vector<ArrangementResult>& results);

// {"arrangements": [{label, description, target, point}]}
boost::json::value OfflineComparisonToJson(const std::vector<ArrangementResult>& results);

}  // namespace goodput
