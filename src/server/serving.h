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
#include "engine/engine_config.h"
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
  ServerOptions http;
};

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
