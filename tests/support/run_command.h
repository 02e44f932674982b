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

// Each command line (after `prefix`) exits non-zero with its message on
// stderr (a gtest failure names the command otherwise).
void ExpectEachFails(const std::vector<std::pair<std::string, std::string>>& cases, const std::string& prefix = "");

}  // namespace goodput::testing
