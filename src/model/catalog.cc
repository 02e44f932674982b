#include "model/catalog.h"

#include <algorithm>
#include <cctype>
#include <filesystem>

#include <fmt/format.h>

#include "core/data_dir.h"

namespace goodput {
namespace fs = std::filesystem;

std::vector<std::string> CatalogModelNames() {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(fs::path(DataDir()) / "models", ec)) {
    if (fs::exists(entry.path() / "config.json")) names.push_back(entry.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

Result<ModelSpec> LoadModel(const std::string& name_or_path) {
  std::string lower = name_or_path;
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  for (const auto& name : CatalogModelNames()) {
    if (name == lower) {
      auto spec = LoadModelConfig((fs::path(DataDir()) / "models" / name).string());
      if (spec.ok()) spec->name = name;
      return spec;
    }
  }
  std::error_code ec;
  if (fs::exists(name_or_path, ec)) return LoadModelConfig(name_or_path);
  return Status::NotFound(fmt::format("unknown model '{}': not a catalog name nor a path. Known models: {}",
                                      name_or_path, fmt::join(CatalogModelNames(), ", ")));
}

}  // namespace goodput
