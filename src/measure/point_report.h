// What a measurement prints: the source's table (load | total throughput |
// per-request speed | TTFT) with TPOT/TTFT percentiles, attainment per
// class, goodput and the SLO verdict per row; the capacity line; notes on the
// measurement's health; the ranking of varied settings; the same as JSON and
// CSV for programs.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <boost/json/value.hpp>

#include "measure/measurement.h"

namespace goodput {

// "99.6% [98.7,99.9] n=480": a class's attainment, its 95% interval and the
// requests behind it; "no data" without one.
std::string AttainmentCell(const ClassAttainment& c);

// One row per load: throughput, per-request speed, TTFT/TPOT p50 and p99,
// per SLO class its attainment with the 95% interval and the requests behind
// it, goodput, spread, preemptions and the verdict.
std::string FormatPointTable(const std::vector<PointResult>& points);

// One row per load: TTFT, TPOT, ITL and E2E as p50 / p90 / p99 / mean (ms).
std::string FormatLatencyTable(const std::vector<PointResult>& points);

// Per load with drafts: vLLM's draft acceptance rate and mean acceptance
// length (tokens per verifying step); "" when no load had drafts.
std::string FormatSpecDecode(const std::vector<PointResult>& points);

// Per load whose target saw its prefix cache: the hit rate and the tokens
// behind it; "" when no load found a cached token.
std::string FormatPrefixCache(const std::vector<PointResult>& points);

// Per load of a fleet (several engine instances): each replica's share of
// the requests, the busiest's over the mean, and where prefix caching ran
// each one's hit rate; "" when no load had more than one instance.
std::string FormatReplicas(const std::vector<PointResult>& points);

// A windowed class's verdict in each window, one letter each in order: h
// holds, f fails, u undecided, - no request of the class.
std::string WindowVerdicts(const ClassAttainment& c);

// Per load, each class judged by windows ("... over 5m"): the deciding
// window, which one it was and its figures; "" when no class has a window.
std::string FormatSloWindows(const std::vector<PointResult>& points);

// The capacity line, then why the next load does not hold (the class that
// fails or is undecided, with its attainment, interval and requests), and
// the classes without an SLO (offline work) at capacity by their throughput.
std::string FormatCapacity(const std::vector<PointResult>& points, std::optional<size_t> capacity, bool capped);

// Everything for people: per setting its target, the workload (`repeat`
// runs per load, up to `max_repeat` while undecided), KV capacity lines, table,
// capacity, max_num_seqs advice and notes (send lag above `lag_threshold_s`
// is flagged); settings ranked by goodput at capacity when there are several.
std::string FormatResults(const std::vector<SettingResult>& results, const Workload& workload, int repeat,
                          int max_repeat, double lag_threshold_s);

// {"results": [{setting, target, engine (its start-up lines), points, capacity, capacity_capped}]}
boost::json::value ResultsToJson(const std::vector<SettingResult>& results);

// One CSV row per load point, with a header.
std::string ResultsToCsv(const std::vector<SettingResult>& results);

}  // namespace goodput
