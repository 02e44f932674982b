// `goodput serve` assembled: the CPU engine (cpu/cpu_engine.h), the
// scheduler (and, under the slo policy, the cost model it fits to steps
// measured at start-up, or takes from goodput calibrate steps), the engine thread and the HTTP server, built from one
// ServeConfig before anything listens, then run until SIGINT or SIGTERM.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "cpu/cpu_engine.h"
#include "hw/cost_model.h"
#include "server/http_server.h"

namespace goodput::server {

// A CPU engine's config (cpu/cpu_engine.h) and the HTTP side around it.
struct ServeConfig : cpu::CpuEngineConfig {
  std::string served_name;            // "": the model's name
  std::vector<std::string> offline_classes = {"offline"};
  std::string step_log;               // "": none; else every step is written there (engine/step_log.h)
  // The slo policy's step-time prior, fitted by goodput calibrate steps on
  // this machine for the model `step_factors_model` (the file's name in
  // `step_factors_from`); unset: fitted to steps measured at start-up.
  std::optional<CostFactors> step_factors;
  std::string step_factors_model, step_factors_from;
  ServerOptions http;
};

class Serving {
 public:
  // Loads and sizes everything, writing vLLM-style start-up lines (the KV
  // capacity; the slo policy's step-time prior) to `log`. Errors are bad
  // settings, named (step factors fitted for another model among them).
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
