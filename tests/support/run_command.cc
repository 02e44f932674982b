#include "support/run_command.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>

namespace goodput::testing {

int UnusedLoopbackPort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  const bool ok = fd >= 0 && bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
                  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0;
  if (fd >= 0) close(fd);
  return ok ? ntohs(addr.sin_port) : 0;
}

CommandResult RunGoodput(const std::string& args) {
  static int counter = 0;
  // Test processes run in parallel: the pid keeps their files apart.
  const std::string err_path =
      ::testing::TempDir() + "goodput_stderr_" + std::to_string(getpid()) + "_" + std::to_string(++counter);
  const std::string cmd = std::string(GOODPUT_BINARY) + " " + args + " 2>" + err_path;
  CommandResult r;
  FILE* pipe = popen(cmd.c_str(), "r");
  if (!pipe) return r;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, pipe)) > 0) r.out.append(buf, n);
  const int status = pclose(pipe);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream err(err_path);
  std::stringstream ss;
  ss << err.rdbuf();
  r.err = ss.str();
  std::remove(err_path.c_str());
  return r;
}

void ExpectEachFails(const std::vector<std::pair<std::string, std::string>>& cases, const std::string& prefix) {
  for (const auto& [args, message] : cases) {
    auto r = RunGoodput(prefix + args);
    EXPECT_NE(r.exit_code, 0) << args;
    EXPECT_NE(r.err.find(message), std::string::npos) << args << "\n" << r.err;
  }
}

}  // namespace goodput::testing
