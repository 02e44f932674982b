// What `goodput tune` prints: the space and how it was searched, the
// simulator's ranking and the settings that cannot run, the target's
// measurements beside the simulator's predictions, and the recommendation
// with its reasons and the flags to paste (as passed to the target, and
// spelled for the serving engine, TuneSpec::engine: `vllm serve` or SGLang's
// launch_server arguments and its --config YAML file); the same as JSON for
// programs.
#pragma once

#include <string>
#include <vector>

#include <boost/json/value.hpp>

#include "tune/tune.h"

namespace goodput {

// The setting the tuning recommends, or nullptr when nothing could run.
const Setting* RecommendedSetting(const TuneResult& r);

std::string FormatTune(const TuneSpec& spec, const TuneResult& r);

boost::json::value TuneToJson(const TuneSpec& spec, const TuneResult& r);

// The recommendation as the engine's --config file (`vllm serve --config`,
// SGLang's `--config`: a comment with the measurement it comes from, then one
// key per flag); "" when there is none or the engine's spelling is not known.
std::string RecommendationYaml(const TuneSpec& spec, const TuneResult& r);

}  // namespace goodput
