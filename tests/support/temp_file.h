// Scratch files for tests. gtest_discover_tests runs each case as its own
// process, in parallel: the pid in the name keeps their files apart.
#ifndef GOODPUT_TESTS_SUPPORT_TEMP_FILE_H_
#define GOODPUT_TESTS_SUPPORT_TEMP_FILE_H_

#include <unistd.h>

#include <fstream>
#include <string>

#include <gtest/gtest.h>

namespace goodput::testing {

// A path under the test temp dir unique to this process; nothing is created.
inline std::string TempPath(const std::string& name) {
  return ::testing::TempDir() + std::to_string(getpid()) + "_" + name;
}

// Writes `text` to TempPath(name) and returns the path.
inline std::string WriteTempFile(const std::string& name, const std::string& text) {
  const std::string path = TempPath(name);
  std::ofstream(path) << text;
  return path;
}

}  // namespace goodput::testing

#endif  // GOODPUT_TESTS_SUPPORT_TEMP_FILE_H_
