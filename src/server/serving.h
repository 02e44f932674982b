// `goodput serve` assembled: the model (weights and tokenizer), the KV pool,
// the scheduler, the CPU runner (and, under the slo policy, the step-time
// line it fits at start-up), the engine thread and the HTTP server, built
// from one ServeConfig before anything listens, then run until SIGINT or
// SIGTERM.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "cpu/cpu_runner.h"
#include "engine/engine_config.h"
#include "engine/kv_groups.h"
#include "model/tokenizer.h"
#include "server/http_server.h"

namespace goodput::server {

struct ServeConfig {
  std::string model;                  // a preset or catalog name, or a model directory
  std::string load_format = "auto";   // auto (safetensors when the directory has them) | dummy | safetensors
  std::string tokenizer;              // tokenizer.json; "": the model directory's, else the byte tokenizer
  uint64_t seed = 0;                  // of dummy weights
  EngineConfig engine;                // sizes left 0: vLLM's CPU defaults (engine/engine_config.h)
  std::optional<double> slo_tpot;     // required by the slo policy: the interactive TPOT target (s)
  double slo_headroom = 0.9;          // slo policy: share of the TPOT target a step may take
  std::string served_name;            // "": the model's name
  std::vector<std::string> offline_classes = {"offline"};
  std::string step_log;               // "": none; else every step is written there (engine/step_log.h)
  ServerOptions http;
};

// The CPU engine's model, tokenizer, resolved settings, KV pool and runner,
// as `serve` runs them (and `goodput calibrate steps` measures them).
struct CpuEngine {
  ModelSpec model;
  std::unique_ptr<Tokenizer> tokenizer;
  EngineConfig config;  // resolved: vLLM's CPU defaults filled in
  cpu::CpuKvLayout layout;
  int64_t num_blocks = 0;
  KvCapacity capacity;
  std::unique_ptr<cpu::CpuModelRunner> runner;
};

// Loads and sizes the engine `config` describes. Errors are bad settings, named.
Result<CpuEngine> LoadCpuEngine(const ServeConfig& config);

// The model, tokenizer and resolved settings of that engine, without its
// weights, KV pool or runner (layout, num_blocks and runner stay empty): what
// fitting its logged steps needs. Errors as LoadCpuEngine's, but the pool's.
Result<CpuEngine> LoadCpuEngineSettings(const ServeConfig& config);

class Serving {
 public:
  // Loads and sizes everything, writing vLLM-style start-up lines (the KV
  // capacity; the slo policy's fitted step line) to `log`. Errors are bad
  // settings, named.
  static Result<std::unique_ptr<Serving>> Build(const ServeConfig& config, std::ostream& log);
  ~Serving();

  // Listens, starts the engine, logs "goodput serve: NAME on http://HOST:PORT"
  // and serves until SIGINT or SIGTERM; then stops accepting, aborts what is in
  // flight (its streams get their final chunks) and returns. Errors: the
  // address cannot be bound.
  Status Run(std::ostream& log);

  struct Parts;

 private:
  explicit Serving(std::unique_ptr<Parts> parts);
  std::unique_ptr<Parts> parts_;
};

}  // namespace goodput::server
