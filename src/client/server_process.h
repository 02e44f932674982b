// Servers a measurement starts itself and stops afterwards, reached over
// HTTP: goodput serve on a free loopback port (`--target embedded`), or any
// server from a shell command (`--launch`), restarted per --vary value.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "client/http_target.h"

namespace goodput {

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
  Result<MeasuredRun> Run(const Workload& workload, const ArrivalSpec& load, int repetition) override;
  std::string Describe() const override;
  // The server's "GPU KV cache size" and "Maximum concurrency" lines.
  std::string StartupLines() const override;
  std::string ServedUrl() const override { return http_.ServedUrl(); }

 private:
  EmbeddedTarget(int pid, int log_fd, std::string startup_log, std::string describe, client::LoadOptions options);
  int pid_;
  int log_fd_;  // the server's output (an unlinked file: see CreateServerLog)
  std::string startup_log_, describe_;
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
  Result<MeasuredRun> Run(const Workload& workload, const ArrivalSpec& load, int repetition) override;
  std::string Describe() const override;
  std::string ServedUrl() const override { return http_.ServedUrl(); }

 private:
  LaunchedTarget(int pid, std::string command, int log_fd, client::LoadOptions options);
  int pid_;
  std::string command_;
  int log_fd_;
  HttpTarget http_;
};

}  // namespace goodput
