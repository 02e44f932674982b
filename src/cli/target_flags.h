// The one place that turns `--target` into a Target, for every command that
// measures (bench, sweep, capacity, tune, compare-outputs): an
// OpenAI-compatible URL (optionally a server started per setting by
// --launch), `embedded` (goodput serve started for the run) or `sim:GPU` /
// `sim:FILE` (the simulator on a catalog card or a calibration file).
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "client/load_client.h"
#include "core/status.h"
#include "measure/measurement.h"
#include "measure/target.h"

namespace goodput {

enum class TargetKind { kUrl, kEmbedded, kSim };

struct TargetArgs {
  std::string target;       // URL | embedded | sim:GPU | sim:FILE
  std::string model;        // served name (URL), preset (embedded), catalog model (sim)
  std::string engine_args;  // goodput serve's flags (embedded) or goodput sim's (sim), for every setting
  std::string api_key, launch;
  std::string router = "round-robin";  // URL1,URL2,...: the client's routing among them
  double timeout = 600;         // seconds a request may take
  double launch_timeout = 600;  // seconds a launched server may take to answer
  bool chat = false, no_fixed_length = false, insecure = false;
  std::function<bool()> stop;  // when set and true, requests in flight are abandoned
  // bench --shard I/N and --start-at: this process's share of one load (client::LoadOptions).
  int shard = 0, shards = 1;
  std::optional<double> start_at_epoch;
};

// Registers --target (required when `required`), --router, --model, --engine-args,
// --launch, --launch-timeout, --api-key, --insecure, --timeout, --chat and
// --no-fixed-length with their help.
void AddTargetFlags(CLI::App& app, TargetArgs& a, bool required = true);

TargetKind KindOf(const TargetArgs& a);

// Flag combinations that cannot work, caught before anything starts: a bad
// URL, a missing --model, --launch on a target that is not a URL, and (when
// `changes_settings`: the command restarts the engine per setting) a URL
// without a --launch template that takes the setting.
Status CheckTargetFlags(const TargetArgs& a, bool changes_settings);

// The launch template with {flags} replaced by the setting's flags
// ("--max-num-seqs 16 --kv-cache-dtype fp8") and {value} by its one value.
// Errors: {value} for a setting of several flags.
Result<std::string> LaunchCommand(const std::string& tmpl, const Setting& setting);

// "--a 1  --b 2" -> {"--a", "1", "--b", "2"} (words split on spaces).
std::vector<std::string> SplitArgs(const std::string& s);

// The target of one setting: the engine flags of --engine-args, then the
// setting's (a launch template gets them through {flags} or {value}).
Result<std::unique_ptr<Target>> MakeTarget(const TargetArgs& a, const Setting& setting);

}  // namespace goodput
