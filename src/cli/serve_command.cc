#include "cli/serve_command.h"

#include "cli/engine_flags.h"

#include <iostream>
#include <memory>

#include "calibrate/calibration.h"
#include "core/units.h"
#include "server/serving.h"

namespace goodput {
namespace {

struct ServeArgs {
  EngineArgs engine;
  std::string model, load_format = "auto", tokenizer, slo_tpot, host = "127.0.0.1", api_key, served_name, step_log;
  std::string step_calibration;
  std::vector<std::string> offline_classes = {"offline"};
  uint64_t seed = 0;
  double slo_headroom = 0.9;
  int port = 8000;
  int timeout_keep_alive = 5;
  int timeout_write = 30;
};

void AddServeFlags(CLI::App& c, ServeArgs& a) {
  c.add_option("--model,-m", a.model, "Preset or catalog name (goodput-small, goodput-tiny, ...) or a model directory")
      ->required();
  c.add_option("--load-format", a.load_format, "auto (safetensors when the directory has them) | dummy | safetensors")
      ->capture_default_str();
  c.add_option("--seed", a.seed, "Seed of the dummy weights")->capture_default_str();
  c.add_option("--tokenizer", a.tokenizer, "tokenizer.json (default: the model directory's, else the byte tokenizer)");
  AddEngineFlags(c, a.engine, kEngineSizeFlags | kEngineSchedulingFlags);
  c.add_option("--slo-tpot", a.slo_tpot,
               "slo policy: the interactive TPOT target (e.g. 100ms); offline work enters a step only while the "
               "step's predicted time stays within it");
  c.add_option("--step-calibration", a.step_calibration,
               "slo policy: predict steps with this calibration from goodput calibrate steps (this model, this "
               "machine) instead of measuring steps at start-up");
  c.add_option("--slo-headroom", a.slo_headroom, "slo policy: share of the TPOT target a step may take")
      ->capture_default_str();
  c.add_option("--offline-classes", a.offline_classes, "Request classes scheduled as offline")->capture_default_str();
  c.add_option("--host", a.host, "Address to listen on")->capture_default_str();
  c.add_option("--port", a.port, "Port (0: any free port, printed at start)")->capture_default_str();
  c.add_option("--api-key", a.api_key, "Require 'Authorization: Bearer KEY'");
  c.add_option("--timeout-keep-alive", a.timeout_keep_alive, "Seconds an idle connection stays open (as vLLM's)")
      ->capture_default_str();
  c.add_option("--timeout-write", a.timeout_write,
               "Seconds a client may take to accept a response or stream chunk before it is dropped and its request "
               "aborted")
      ->capture_default_str();
  c.add_option("--served-model-name", a.served_name, "Model name in the API (default: the model's)");
  c.add_option("--step-log", a.step_log,
               "Write every engine step (its start, duration and what each request computed, when each "
               "request reached the engine and whether the step finished it) to this file, for "
               "goodput calibrate steps --from-step-log");
}

// The slo policy's step-time prior from goodput calibrate steps' file.
Status UseStepCalibration(const std::string& path, server::ServeConfig& c) {
  if (c.engine.scheduler.policy != SchedulingPolicy::kSlo) {
    return Status::InvalidArgument(
        "--step-calibration is the slo policy's step-time prior: give --scheduling-policy slo");
  }
  auto cal = LoadCalibration(path);
  if (!cal.ok()) return cal.status().WithContext("--step-calibration");
  if (!cal->hardware.cpu) {
    return Status::InvalidArgument("--step-calibration: " + path + " is a calibration of " + cal->hardware.name +
                                   ", not of goodput serve's CPU engine (goodput calibrate steps writes one)");
  }
  c.step_factors = cal->factors;
  c.step_factors_model = cal->model;
  c.step_factors_from = path;
  return Status::Ok();
}

Result<server::ServeConfig> ToServeConfig(const ServeArgs& a) {
  server::ServeConfig c;
  c.model = a.model;
  c.load_format = a.load_format;
  c.tokenizer = a.tokenizer;
  c.seed = a.seed;
  GOODPUT_ASSIGN_OR_RETURN(c.engine, ToEngineConfig(a.engine));
  if (!a.slo_tpot.empty()) {
    auto tpot = ParseDuration(a.slo_tpot);
    if (!tpot.ok()) return tpot.status().WithContext("--slo-tpot");
    c.slo_tpot = *tpot;
  }
  c.slo_headroom = a.slo_headroom;
  c.served_name = a.served_name;
  c.offline_classes = a.offline_classes;
  c.step_log = a.step_log;
  if (!a.step_calibration.empty()) GOODPUT_RETURN_IF_ERROR(UseStepCalibration(a.step_calibration, c));
  if (a.port < 0 || a.port > 65535) return Status::InvalidArgument("--port must be 0..65535");
  if (a.timeout_keep_alive < 1) return Status::InvalidArgument("--timeout-keep-alive must be at least 1");
  if (a.timeout_write < 1) return Status::InvalidArgument("--timeout-write must be at least 1");
  c.http.host = a.host;
  c.http.port = static_cast<uint16_t>(a.port);
  c.http.api_key = a.api_key;
  c.http.idle_timeout_s = a.timeout_keep_alive;
  c.http.write_timeout_s = a.timeout_write;
  return c;
}

void RunServe(const ServeArgs& a) {
  const auto fail = [](const Status& st) { throw CLI::RuntimeError("goodput serve: " + st.message(), 2); };
  auto config = ToServeConfig(a);
  if (!config.ok()) fail(config.status());
  auto serving = server::Serving::Build(*config, std::cerr);
  if (!serving.ok()) fail(serving.status());
  if (Status st = (*serving)->Run(std::cerr); !st.ok()) fail(st);
}

}  // namespace

void AddServeCommand(CLI::App& app) {
  auto args = std::make_shared<ServeArgs>();
  CLI::App* c =
      app.add_subcommand("serve", "Serve a CPU transformer behind an OpenAI-compatible API (completions, chat, SSE)");
  AddServeFlags(*c, *args);
  c->callback([args]() { RunServe(*args); });
}

}  // namespace goodput
