// What a measurement drives (DESIGN.md seam 6): an OpenAI-compatible
// endpoint, goodput's own server started for the run, or the simulator.
// `bench`, `sweep` and `capacity` are written once against Target.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "client/load_client.h"
#include "core/status.h"
#include "sim/setup.h"
#include "sim/simulator.h"
#include "workload/workload.h"

namespace goodput {

class Target {
 public:
  virtual ~Target() = default;
  // Runs `workload` at `load` to the end of its request budget. `repetition`
  // (1, 2, ...) varies the requests' seed. The run's records, window and
  // whatever counters the target can see (an HTTP target sees no steps).
  virtual Result<SimRun> Run(const Workload& workload, const ArrivalSpec& load, int repetition) = 0;
  // One line for people: "http://127.0.0.1:8000/v1 (model m)", "sim:h100 ...".
  virtual std::string Describe() const = 0;
};

// Any OpenAI-compatible server. Progress goes to `progress` when set.
class HttpTarget final : public Target {
 public:
  explicit HttpTarget(client::LoadOptions options) : options_(std::move(options)) {}
  Result<SimRun> Run(const Workload& workload, const ArrivalSpec& load, int repetition) override;
  std::string Describe() const override;

 private:
  client::LoadOptions options_;
  RealClock clock_;
};

// `goodput serve` started for the measurement on a free loopback port, with
// the given extra serve flags, and stopped (SIGTERM) when the target goes.
class EmbeddedTarget final : public Target {
 public:
  // `goodput_binary`: the goodput executable; `serve_args`: flags after
  // "serve --model MODEL --port 0". Waits until the server listens.
  static Result<std::unique_ptr<EmbeddedTarget>> Start(const std::string& goodput_binary, const std::string& model,
                                                       const std::vector<std::string>& serve_args,
                                                       client::LoadOptions options);
  ~EmbeddedTarget() override;
  Result<SimRun> Run(const Workload& workload, const ArrivalSpec& load, int repetition) override;
  std::string Describe() const override;
  // The server's start-up lines (its KV capacity, for reports).
  const std::string& startup_log() const { return startup_log_; }

 private:
  EmbeddedTarget(int pid, std::string log_path, std::string startup_log, std::string describe,
                 client::LoadOptions options);
  int pid_;
  std::string log_path_, startup_log_, describe_;
  HttpTarget http_;
};

// A server the measurement starts itself with a shell command (e.g. "vllm
// serve ... --max-num-seqs 16 --port 8000"), reached at a URL: the command
// runs in its own process group, the target waits until GET {url}/models
// answers 200, and the whole group gets SIGTERM (then SIGKILL) at the end.
class LaunchedTarget final : public Target {
 public:
  static Result<std::unique_ptr<LaunchedTarget>> Start(const std::string& command, client::LoadOptions options,
                                                       double startup_timeout_s);
  ~LaunchedTarget() override;
  Result<SimRun> Run(const Workload& workload, const ArrivalSpec& load, int repetition) override;
  std::string Describe() const override;

 private:
  LaunchedTarget(int pid, std::string command, std::string log_path, client::LoadOptions options);
  int pid_;
  std::string command_, log_path_;
  HttpTarget http_;
};

// The simulator: a deployment planned and set up elsewhere (goodput sim's
// flags build it; see MakeSimTarget in cli/sim_command.h).
class SimTarget final : public Target {
 public:
  // `describe` names the GPU, model and engine settings for people.
  static std::unique_ptr<SimTarget> FromSetup(SimSetup setup, std::string describe);
  Result<SimRun> Run(const Workload& workload, const ArrivalSpec& load, int repetition) override;
  std::string Describe() const override;

 private:
  explicit SimTarget(SimSetup setup, std::string describe) : setup_(std::move(setup)), describe_(std::move(describe)) {}
  SimSetup setup_;
  std::string describe_;
};

}  // namespace goodput
