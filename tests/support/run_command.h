// Runs a command line in a shell and captures what it printed and its exit
// code; for end-to-end tests of the goodput binary.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace goodput::testing {

struct CommandResult {
  int exit_code = -1;
  std::string out;  // stdout
  std::string err;  // stderr
};

// Runs `args` (already shell-quoted) after the goodput binary under test.
CommandResult RunGoodput(const std::string& args);

// A loopback port no socket listens on now, from the kernel's choice for a
// socket bound to port 0, for a server a test starts by command line. (A port
// derived from the pid could be any other process's ephemeral port.)
int UnusedLoopbackPort();

// Each command line (after `prefix`) exits non-zero with its message on
// stderr (a gtest failure names the command otherwise).
void ExpectEachFails(const std::vector<std::pair<std::string, std::string>>& cases, const std::string& prefix = "");

}  // namespace goodput::testing
