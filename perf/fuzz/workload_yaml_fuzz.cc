// libFuzzer target: the workload parser (YAML: classes, length
// distributions, arrivals, SLOs) on arbitrary text. Every input is a
// workload or an error that says why; none crashes, hangs or asks for
// unbounded memory (ASan and UBSan on). File references resolve against an
// empty directory. Built by perf/fuzz.sh.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>

#include "workload/workload.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string empty_dir = [] {
    auto dir = std::filesystem::temp_directory_path() / "goodput-fuzz-empty";
    std::filesystem::create_directories(dir);
    return dir.string();
  }();
  const std::string text(reinterpret_cast<const char*>(data), size);
  auto w = goodput::ParseWorkload(text, "fuzz.yaml", empty_dir);
  if (!w.ok() && w.status().message().empty()) __builtin_trap();  // every refusal says why
  return 0;
}
