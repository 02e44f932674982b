// The CPU engine assembled from one config: the model (weights and
// tokenizer), vLLM's settings resolved for the CPU, the KV pool and the
// runner — what `goodput serve` runs behind HTTP, and what `goodput calibrate
// steps` measures without it.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "core/status.h"
#include "cpu/cpu_runner.h"
#include "engine/engine_config.h"
#include "engine/kv_groups.h"
#include "model/tokenizer.h"

namespace goodput::cpu {

struct CpuEngineConfig {
  std::string model;  // a preset or catalog name, or a model directory
  std::string load_format = "auto";  // auto (safetensors when the directory has them) | dummy | safetensors
  std::string tokenizer;  // tokenizer.json; "": the model directory's, else the byte tokenizer
  uint64_t seed = 0;  // of dummy weights
  EngineConfig engine;  // sizes left 0: vLLM's CPU defaults (engine/engine_config.h)
  std::optional<double> slo_tpot;  // required by the slo policy: the interactive TPOT target (s)
  double slo_headroom = 0.9;  // slo policy: share of the TPOT target a step may take
};

// The CPU engine's model, tokenizer, resolved settings, KV pool and runner.
struct CpuEngine {
  ModelSpec model;
  std::unique_ptr<Tokenizer> tokenizer;
  EngineConfig config;  // resolved: vLLM's CPU defaults filled in
  CpuKvLayout layout;
  int64_t num_blocks = 0;
  KvCapacity capacity;
  std::unique_ptr<CpuModelRunner> runner;
};

// Loads and sizes the engine `config` describes. Errors are bad settings,
// named: an unknown model, a tokenizer larger than the model's vocabulary, a
// pool too small for one request, more memory than the host has.
Result<CpuEngine> LoadCpuEngine(const CpuEngineConfig& config);

// The model, tokenizer and resolved settings of that engine, without its
// weights, KV pool or runner (layout, num_blocks and runner stay empty): what
// fitting its logged steps needs. Errors as LoadCpuEngine's, but the pool's.
Result<CpuEngine> LoadCpuEngineSettings(const CpuEngineConfig& config);

}  // namespace goodput::cpu
