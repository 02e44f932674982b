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
#include <thread>

#include <boost/asio.hpp>
#include <boost/beast.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/text.h"

namespace goodput {

namespace {

// A started server's stdout and stderr: a file made by mkostemps (O_EXCL,
// mode 0600: no other user can plant a link there or read it) under $TMPDIR
// and unlinked at once, so not even a run killed with SIGKILL leaves it
// behind; the server writes through its copy of the descriptor and we read
// it back through ours.
Result<int> CreateServerLog() {
  std::error_code ec;
  const std::filesystem::path dir = std::filesystem::temp_directory_path(ec);
  std::string path = ((ec ? std::filesystem::path("/tmp") : dir) / "goodput-server-XXXXXX.log").string();
  const int fd = mkostemps(path.data(), 4, O_CLOEXEC | O_APPEND);
  if (fd < 0) return Status::IoError(fmt::format("cannot create {}: {}", path, std::strerror(errno)));
  unlink(path.c_str());
  return fd;
}

// What the server wrote so far, up to its first 4 MiB (the lines we look for come first).
std::string ReadLog(int fd) {
  std::string out;
  char block[1 << 16];
  ssize_t n = 0;
  while (out.size() < (4u << 20) && (n = pread(fd, block, sizeof block, static_cast<off_t>(out.size()))) > 0) {
    out.append(block, static_cast<size_t>(n));
  }
  return out;
}

// The start of what a server that failed to start wrote, for its error; the log is closed.
std::string CloseLog(int fd) {
  const std::string log = ReadLog(fd);
  close(fd);
  return std::string(Trim(log)).substr(0, 2000);
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

// Starts `argv` with stdout and stderr written to `log`, in a process group
// of its own when `new_group` (so that a shell's children stop with it), and
// has the kernel send it SIGTERM when this process dies
// (PR_SET_PDEATHSIG): a measurement killed with SIGKILL leaves no server
// behind. posix_spawn cannot set the death signal, hence fork and exec; the
// child calls only async-signal-safe functions, and reports an exec failure
// through a close-on-exec pipe.
Result<int> SpawnWithLog(const std::vector<std::string>& argv, int log, bool new_group) {
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  int exec_error[2];
  if (pipe2(exec_error, O_CLOEXEC) != 0) return Status::IoError(std::string("pipe: ") + std::strerror(errno));
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

// A server started (SpawnWithLog) with a new log of its own (CreateServerLog).
struct Spawned {
  int pid;
  int log_fd;
};
Result<Spawned> Spawn(const std::vector<std::string>& argv, bool new_group = false) {
  GOODPUT_ASSIGN_OR_RETURN(const int log, CreateServerLog());
  auto pid = SpawnWithLog(argv, log, new_group);
  if (!pid.ok()) {
    close(log);
    return pid.status();
  }
  return Spawned{*pid, log};
}

}  // namespace

Result<std::unique_ptr<EmbeddedTarget>> EmbeddedTarget::Start(const std::string& goodput_binary,
                                                              const std::string& model,
                                                              const std::vector<std::string>& serve_args,
                                                              client::LoadOptions options) {
  std::vector<std::string> argv = {goodput_binary, "serve", "--model", model, "--port", "0", "--host", "127.0.0.1"};
  argv.insert(argv.end(), serve_args.begin(), serve_args.end());
  GOODPUT_ASSIGN_OR_RETURN(const Spawned server, Spawn(argv));
  const int pid = server.pid, log_fd = server.log_fd;
  // Dummy weights, and the slo policy's step measurements, take seconds.
  for (int i = 0; i < 1800; ++i) {
    const std::string log = ReadLog(log_fd);
    if (auto line = ListeningLine(log)) {
      auto endpoint = client::ParseEndpoint(line->second + "/v1");
      if (!endpoint.ok()) break;
      options.endpoint.host = endpoint->host;
      options.endpoint.port = endpoint->port;
      options.model = line->first;
      const std::string describe =
          fmt::format("embedded `goodput serve --model {}{}{}` on port {}", model, serve_args.empty() ? "" : " ",
                      fmt::join(serve_args, " "), endpoint->port);
      return std::unique_ptr<EmbeddedTarget>(new EmbeddedTarget(pid, log_fd, log, describe, std::move(options)));
    }
    int status = 0;
    if (waitpid(pid, &status, WNOHANG) == pid) {
      close(log_fd);
      return Status::FailedPrecondition(fmt::format("goodput serve exited at start-up:\n{}", std::string(Trim(log))));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
  return Status::FailedPrecondition("goodput serve did not start listening within 180 s; it wrote:\n" +
                                    CloseLog(log_fd));
}

EmbeddedTarget::EmbeddedTarget(int pid, int log_fd, std::string startup_log, std::string describe,
                               client::LoadOptions options)
    : pid_(pid),
      log_fd_(log_fd),
      startup_log_(std::move(startup_log)),
      describe_(std::move(describe)),
      http_(std::move(options)) {}

EmbeddedTarget::~EmbeddedTarget() {
  kill(pid_, SIGTERM);
  for (int i = 0; i < 100; ++i) {  // serve exits within its 0.5 s grace period
    if (waitpid(pid_, nullptr, WNOHANG) == pid_) {
      close(log_fd_);
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  kill(pid_, SIGKILL);
  waitpid(pid_, nullptr, 0);
  close(log_fd_);
}

Result<MeasuredRun> EmbeddedTarget::Run(const Workload& workload, const ArrivalSpec& load, int repetition) {
  return http_.Run(workload, load, repetition);
}

std::string EmbeddedTarget::Describe() const { return describe_; }

std::string EmbeddedTarget::StartupLines() const {
  std::string out;
  for (const std::string& line : Split(startup_log_, '\n')) {
    if (line.rfind("GPU KV cache size", 0) == 0 || line.rfind("Maximum concurrency", 0) == 0 ||
        line.rfind("matrix products:", 0) == 0) {
      out += line + "\n";
    }
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
  GOODPUT_ASSIGN_OR_RETURN(const Spawned server, Spawn({"/bin/sh", "-c", "exec " + command}, /*new_group=*/true));
  const int pid = server.pid, log_fd = server.log_fd;
  for (double waited = 0; waited < startup_timeout_s; waited += 0.2) {
    if (ModelsAnswer(options.endpoint)) {
      return std::unique_ptr<LaunchedTarget>(new LaunchedTarget(pid, command, log_fd, std::move(options)));
    }
    int status = 0;
    if (waitpid(pid, &status, WNOHANG) == pid) {
      return Status::FailedPrecondition(
          fmt::format("'{}' exited before {} answered:\n{}", command, options.endpoint.Url(), CloseLog(log_fd)));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  StopGroup(pid);
  return Status::FailedPrecondition(fmt::format("'{}' did not answer at {} within {:g} s; it wrote:\n{}", command,
                                                options.endpoint.Url(), startup_timeout_s, CloseLog(log_fd)));
}

LaunchedTarget::LaunchedTarget(int pid, std::string command, int log_fd, client::LoadOptions options)
    : pid_(pid), command_(std::move(command)), log_fd_(log_fd), http_(std::move(options)) {}

LaunchedTarget::~LaunchedTarget() {
  StopGroup(pid_);
  close(log_fd_);
}

Result<MeasuredRun> LaunchedTarget::Run(const Workload& workload, const ArrivalSpec& load, int repetition) {
  return http_.Run(workload, load, repetition);
}

std::string LaunchedTarget::Describe() const { return http_.Describe() + ", launched with `" + command_ + "`"; }

}  // namespace goodput
