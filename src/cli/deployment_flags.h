// Flags that describe a deployment (model, GPU, engine memory settings),
// shared by `plan`, `sim` and later commands, and their parsing into
// PlanOptions with errors that name the flag.
#pragma once

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cli/engine_flags.h"
#include "core/status.h"
#include "hw/hardware.h"
#include "plan/planner.h"

namespace goodput {

// Sizes and lengths stay strings so our parsers can say what is wrong.
struct DeploymentArgs {
  std::string model, gpu, gpu_memory, weights = "auto", mamba_ssm_cache_dtype = "auto", mxfp4_moe_backend = "auto";
  std::string unquantized;
  std::string weights_memory, activation_memory, non_torch_memory, cuda_graph_memory, safety_buffer = "1.5GiB";
  int tensor_parallel = 1;
  bool expert_parallel = false;
  int data_parallel = 1;
  double routing_imbalance = 1.0;
  double utilization = 0.9;
  std::optional<double> mem_fraction_static;  // SGLang's share instead of --gpu-memory-utilization
  int64_t kernel_block_alignment = 16;
  int num_draft_layers = 0;
  bool disable_hybrid = false;
  bool disable_q_quantization = false;  // plan only: --disable-flashinfer-q-quantization
  EngineArgs engine;
  std::string engine_host;  // --engine (sim, calibrate): host costs from data/hardware/engines.json; empty: vllm
};

// --engine on a command that simulates a catalog card: the serving engine whose
// host-side costs every step and request carry.
void AddEngineHostFlag(CLI::App& app, DeploymentArgs& a);

// The --engine name, "vllm" when not given.
inline std::string EngineHostName(const DeploymentArgs& a) { return a.engine_host.empty() ? "vllm" : a.engine_host; }

// The deployment's flags and the engine flags `engine_flags` selects
// (EngineFlagSet).
void AddDeploymentFlags(CLI::App& app, DeploymentArgs& a, unsigned engine_flags);

// The GPU the flags name (a catalog entry, or a custom one from --gpu-memory).
Result<HardwareSpec> ResolveHardware(const DeploymentArgs& a);

Result<PlanOptions> ToPlanOptions(const DeploymentArgs& a);
// The same on hardware resolved elsewhere (a calibration's).
Result<PlanOptions> ToPlanOptions(const DeploymentArgs& a, const HardwareSpec& hw);

// `FLAG=VALUE` applied to a copy of `base` by the same flag definitions, so
// every flag can be varied: used by --compare and --sweep. `add_flags`
// registers the command's flags on an app for an Args object.
template <typename Args, typename AddFlags>
Result<Args> WithFlagChanged(const Args& base, const std::string& change, AddFlags add_flags) {
  const size_t eq = change.find('=');
  if (eq == std::string::npos || eq == 0) {
    return Status::InvalidArgument(fmt::format("'{}' must look like FLAG=VALUE, e.g. kv-cache-dtype=fp8", change));
  }
  std::string flag = change.substr(0, eq);
  if (flag.rfind("--", 0) != 0) flag = "--" + flag;
  Args changed = base;
  CLI::App app;
  add_flags(app, changed);
  try {
    app.parse(std::vector<std::string>{flag + "=" + change.substr(eq + 1)});
  } catch (const CLI::ParseError& e) {
    return Status::InvalidArgument(fmt::format("'{}': {}", change, e.what()));
  }
  return changed;
}

}  // namespace goodput
