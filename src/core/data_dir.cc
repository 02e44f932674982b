#include "core/data_dir.h"

#include <cstdlib>
#include <filesystem>

namespace goodput {

std::string DataDir() {
  namespace fs = std::filesystem;
  if (const char* env = std::getenv("GOODPUT_DATA_DIR"); env && *env) return env;
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    for (fs::path dir = exe.parent_path(); !dir.empty() && dir != dir.root_path(); dir = dir.parent_path()) {
      if (fs::is_directory(dir / "data" / "models", ec)) return (dir / "data").string();
    }
  }
  return GOODPUT_SOURCE_DATA_DIR;
}

}  // namespace goodput
