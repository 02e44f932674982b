#include "calibrate/published.h"

#include <cmath>
#include <filesystem>
#include <set>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "core/data_dir.h"
#include "core/json_file.h"
#include "measure/ladder.h"
#include "measure/point.h"
#include "workload/workload.h"
#include "workload/yaml_input.h"

namespace goodput {
namespace {

// `key` of point `n` as a positive number up to `max` (beyond it a typo a fit
// would chase); 0 when absent.
Result<double> Figure(const YAML::Node& n, const char* key, double max, const std::string& where) {
  const YAML::Node v = n[key];
  if (!v) return 0.0;
  double x = 0;
  try {
    x = v.as<double>();
  } catch (const YAML::Exception&) {
  }
  if (!(x > 0 && x <= max)) {
    return YamlError(where, v, fmt::format("'{}' must be a positive number, at most {:g}", key, max));
  }
  return x;
}

// A workload path: absolute, beside the figures' file, or a name under data/workloads/.
std::string WorkloadPath(const std::string& name, const std::string& base_dir) {
  const std::filesystem::path p(name);
  if (p.is_absolute()) return name;
  const std::filesystem::path beside = std::filesystem::path(base_dir) / p;
  if (std::filesystem::exists(beside)) return beside.string();
  return (std::filesystem::path(DataDir()) / "workloads" / p).string();
}

Result<MeasuredLoad> ParsePoint(const YAML::Node& n, const std::string& where, const std::string& base_dir) {
  if (!n.IsMap()) return YamlError(where, n, "a point is a mapping with 'workload' and its figures");
  static const std::set<std::string> kKeys = {"workload", "concurrency", "rate", "ttft_p50_s", "tpot_p50_s",
                                              "throughput_tokens_per_s"};
  for (const auto& kv : n) {
    const std::string key = kv.first.IsScalar() ? kv.first.as<std::string>() : "";
    if (!kKeys.count(key)) {
      return YamlError(where, kv.first, fmt::format("unknown key '{}' (a point has workload, concurrency or rate, "
                                              "ttft_p50_s, tpot_p50_s, throughput_tokens_per_s)", key));
    }
  }
  const YAML::Node name = n["workload"];
  if (!name || !name.IsScalar()) return YamlError(where, n, "a point needs 'workload', a workload file");
  MeasuredLoad m;
  GOODPUT_ASSIGN_OR_RETURN(m.workload, LoadWorkload(WorkloadPath(name.as<std::string>(), base_dir)));
  const auto text = [&](const char* key) { return n[key] && n[key].IsScalar() ? n[key].as<std::string>() : ""; };
  auto ladder = Ladder(text("concurrency"), text("rate"), std::nullopt, m.workload);
  if (!ladder.ok()) return YamlError(where, n, ladder.status().message());
  if (ladder->size() != 1) return YamlError(where, n, "a point has one load: one concurrency or one rate");
  m.load = ladder->front();
  // A day to a first token, an hour a token, a billion tokens a second: past any serving measurement.
  GOODPUT_ASSIGN_OR_RETURN(m.ttft_p50, Figure(n, "ttft_p50_s", 86400, where));
  GOODPUT_ASSIGN_OR_RETURN(m.tpot_p50, Figure(n, "tpot_p50_s", 3600, where));
  GOODPUT_ASSIGN_OR_RETURN(m.throughput, Figure(n, "throughput_tokens_per_s", 1e9, where));
  if (m.ttft_p50 == 0 && m.tpot_p50 == 0 && m.throughput == 0) {
    return YamlError(where, n, "a point needs at least one of ttft_p50_s, tpot_p50_s, throughput_tokens_per_s");
  }
  m.label = fmt::format("{} at load {}", m.workload.name, LoadLabel(m.load));
  return m;
}

}  // namespace

Result<PublishedFigures> ParsePublishedFigures(const std::string& text, const std::string& where,
                                               const std::string& base_dir) {
  GOODPUT_ASSIGN_OR_RETURN(const YAML::Node root,
                           ParseYamlMapping(text, where, "published figures are a mapping with 'points'"));
  PublishedFigures out;
  if (root["source"] && root["source"].IsScalar()) out.source = root["source"].as<std::string>();
  const YAML::Node points = root["points"];
  if (!points || !points.IsSequence() || points.size() == 0) {
    return Status::InvalidArgument(where + ": 'points' must list at least one published point");
  }
  for (const auto& n : points) {
    GOODPUT_ASSIGN_OR_RETURN(MeasuredLoad m, ParsePoint(n, where, base_dir));
    out.loads.push_back(std::move(m));
  }
  return out;
}

Result<PublishedFigures> LoadPublishedFigures(const std::string& path) {
  GOODPUT_ASSIGN_OR_RETURN(std::string text, ReadTextFile(path, "published figures"));
  return ParsePublishedFigures(text, path, std::filesystem::path(path).parent_path().string());
}

}  // namespace goodput
