// What `goodput tune` prints: the space and how it was searched, the
// simulator's ranking and the settings that cannot run, the target's
// measurements beside the simulator's predictions, and the recommendation
// with its reasons and the flags to paste (as passed to the target, as
// `vllm serve` arguments and as a `vllm serve --config` YAML file); the same
// as JSON for programs.
#pragma once

#include <string>
#include <vector>

#include <boost/json/value.hpp>

#include "tune/tune.h"

namespace goodput {

// vLLM's spelling of a setting: arguments for `vllm serve`, and notes for
// flags vLLM spells otherwise or does not have (goodput's slo policy, a
// weights format that is a checkpoint rather than a flag).
struct VllmFlags {
  std::vector<std::string> args;  // {"--max-num-seqs", "16", ...}
  std::vector<std::string> yaml;  // {"max-num-seqs: 16", ...}
  std::vector<std::string> notes;
};
VllmFlags ToVllm(const Setting& s);

// The setting the tuning recommends, or nullptr when nothing could run.
const Setting* RecommendedSetting(const TuneResult& r);

std::string FormatTune(const TuneSpec& spec, const TuneResult& r);

boost::json::value TuneToJson(const TuneSpec& spec, const TuneResult& r);

// The recommendation as a `vllm serve --config` file (a comment with the
// measurement it comes from, then one key per flag); "" when there is none.
std::string RecommendationYaml(const TuneSpec& spec, const TuneResult& r);

}  // namespace goodput
