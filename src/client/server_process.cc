#include "client/server_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include <boost/asio.hpp>
#include <boost/beast.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/text.h"

namespace goodput {

namespace {

std::string ReadFile(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

// The "goodput serve: NAME on http://HOST:PORT" line, once it is there.
std::optional<std::pair<std::string, std::string>> ListeningLine(const std::string& log) {
  for (const std::string& line : Split(log, '\n')) {
    const size_t on = line.find(" on http://");
    if (line.rfind("goodput serve: ", 0) == 0 && on != std::string::npos) {
      return std::make_pair(line.substr(15, on - 15), line.substr(on + 4));
    }
  }
  return std::nullopt;
}

// Starts `argv` with stdout and stderr appended to `log_path`, in a process
// group of its own when `new_group` (so that a shell's children stop with
// it), and has the kernel send it SIGTERM when this process dies
// (PR_SET_PDEATHSIG): a measurement killed with SIGKILL leaves no server
// behind. posix_spawn cannot set the death signal, hence fork and exec; the
// child calls only async-signal-safe functions, and reports an exec failure
// through a close-on-exec pipe.
Result<int> Spawn(const std::vector<std::string>& argv, const std::string& log_path, bool new_group = false) {
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const int log = open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (log < 0) return Status::IoError(fmt::format("cannot write {}: {}", log_path, std::strerror(errno)));
  int exec_error[2];
  if (pipe2(exec_error, O_CLOEXEC) != 0) {
    close(log);
    return Status::IoError(std::string("pipe: ") + std::strerror(errno));
  }
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid == 0) {
    if (new_group) setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != parent) _exit(127);  // the parent died before the death signal was set
    dup2(log, STDOUT_FILENO);
    dup2(log, STDERR_FILENO);
    execv(args[0], args.data());
    const int e = errno;
    (void)!write(exec_error[1], &e, sizeof e);
    _exit(127);
  }
  close(log);
  close(exec_error[1]);
  if (pid < 0) {
    close(exec_error[0]);
    return Status::IoError(std::string("fork: ") + std::strerror(errno));
  }
  int e = 0;
  const ssize_t n = read(exec_error[0], &e, sizeof e);
  close(exec_error[0]);
  if (n == static_cast<ssize_t>(sizeof e)) {
    waitpid(pid, nullptr, 0);
    return Status::IoError(fmt::format("cannot start {}: {}", argv[0], std::strerror(e)));
  }
  return static_cast<int>(pid);
}

}  // namespace

Result<std::unique_ptr<EmbeddedTarget>> EmbeddedTarget::Start(const std::string& goodput_binary,
                                                              const std::string& model,
                                                              const std::vector<std::string>& serve_args,
                                                              client::LoadOptions options) {
  std::vector<std::string> argv = {goodput_binary, "serve", "--model", model, "--port", "0", "--host", "127.0.0.1"};
  argv.insert(argv.end(), serve_args.begin(), serve_args.end());
  const std::string log_path =
      (std::filesystem::temp_directory_path() / fmt::format("goodput-serve-{}-{}.log", getpid(), std::rand())).string();
  GOODPUT_ASSIGN_OR_RETURN(int pid, Spawn(argv, log_path));
  // Dummy weights, and the slo policy's step measurements, take seconds.
  for (int i = 0; i < 1800; ++i) {
    const std::string log = ReadFile(log_path);
    if (auto line = ListeningLine(log)) {
      auto endpoint = client::ParseEndpoint(line->second + "/v1");
      if (!endpoint.ok()) break;
      options.endpoint.host = endpoint->host;
      options.endpoint.port = endpoint->port;
      options.model = line->first;
      const std::string describe = fmt::format("embedded `goodput serve --model {}{}{}` on port {}", model,
                                               serve_args.empty() ? "" : " ", fmt::join(serve_args, " "), endpoint->port);
      return std::unique_ptr<EmbeddedTarget>(new EmbeddedTarget(pid, log_path, log, describe, std::move(options)));
    }
    int status = 0;
    if (waitpid(pid, &status, WNOHANG) == pid) {
      std::filesystem::remove(log_path);
      return Status::FailedPrecondition(fmt::format("goodput serve exited at start-up:\n{}", std::string(Trim(log))));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
  return Status::FailedPrecondition("goodput serve did not start listening within 180 s (log: " + log_path + ")");
}

EmbeddedTarget::EmbeddedTarget(int pid, std::string log_path, std::string startup_log, std::string describe,
                               client::LoadOptions options)
    : pid_(pid),
      log_path_(std::move(log_path)),
      startup_log_(std::move(startup_log)),
      describe_(std::move(describe)),
      http_(std::move(options)) {}

EmbeddedTarget::~EmbeddedTarget() {
  kill(pid_, SIGTERM);
  for (int i = 0; i < 100; ++i) {  // serve exits within its 0.5 s grace period
    if (waitpid(pid_, nullptr, WNOHANG) == pid_) {
      std::filesystem::remove(log_path_);
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  kill(pid_, SIGKILL);
  waitpid(pid_, nullptr, 0);
  std::filesystem::remove(log_path_);
}

Result<MeasuredRun> EmbeddedTarget::Run(const Workload& workload, const ArrivalSpec& load, int repetition) {
  return http_.Run(workload, load, repetition);
}

std::string EmbeddedTarget::Describe() const { return describe_; }

std::string EmbeddedTarget::KvCapacityLines() const {
  std::string out;
  for (const std::string& line : Split(startup_log_, '\n')) {
    if (line.rfind("GPU KV cache size", 0) == 0 || line.rfind("Maximum concurrency", 0) == 0) out += line + "\n";
  }
  return out;
}

namespace {

// GET {api}/models answers 200: the server is up.
bool ModelsAnswer(const client::Endpoint& e) { return client::HttpGet(e, e.api_prefix + "/models").ok(); }

// SIGTERM to the process group, SIGKILL after 10 s.
void StopGroup(int pid) {
  kill(-pid, SIGTERM);
  for (int i = 0; i < 200; ++i) {
    if (waitpid(pid, nullptr, WNOHANG) == pid) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  kill(-pid, SIGKILL);
  waitpid(pid, nullptr, 0);
}

}  // namespace

Result<std::unique_ptr<LaunchedTarget>> LaunchedTarget::Start(const std::string& command, client::LoadOptions options,
                                                              double startup_timeout_s) {
  const std::string log_path =
      (std::filesystem::temp_directory_path() / fmt::format("goodput-launch-{}-{}.log", getpid(), std::rand())).string();
  GOODPUT_ASSIGN_OR_RETURN(int pid, Spawn({"/bin/sh", "-c", "exec " + command}, log_path, /*new_group=*/true));
  for (double waited = 0; waited < startup_timeout_s; waited += 0.2) {
    if (ModelsAnswer(options.endpoint)) {
      return std::unique_ptr<LaunchedTarget>(new LaunchedTarget(pid, command, log_path, std::move(options)));
    }
    int status = 0;
    if (waitpid(pid, &status, WNOHANG) == pid) {
      const std::string log = ReadFile(log_path);
      std::filesystem::remove(log_path);
      return Status::FailedPrecondition(fmt::format("'{}' exited before {} answered:\n{}", command,
                                                    options.endpoint.Url(), std::string(Trim(log)).substr(0, 2000)));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  StopGroup(pid);
  return Status::FailedPrecondition(fmt::format("'{}' did not answer at {} within {:g} s (log: {})", command,
                                                options.endpoint.Url(), startup_timeout_s, log_path));
}

LaunchedTarget::LaunchedTarget(int pid, std::string command, std::string log_path, client::LoadOptions options)
    : pid_(pid), command_(std::move(command)), log_path_(std::move(log_path)), http_(std::move(options)) {}

LaunchedTarget::~LaunchedTarget() {
  StopGroup(pid_);
  std::filesystem::remove(log_path_);
}

Result<MeasuredRun> LaunchedTarget::Run(const Workload& workload, const ArrivalSpec& load, int repetition) {
  return http_.Run(workload, load, repetition);
}

std::string LaunchedTarget::Describe() const { return http_.Describe() + ", launched with `" + command_ + "`"; }

}  // namespace goodput
