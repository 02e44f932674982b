// The model catalog: published config.json files under data/models/<name>/.
#pragma once

#include <string>
#include <vector>

#include "core/status.h"
#include "model/model_spec.h"

namespace goodput {

// Names of the catalog's models, sorted.
std::vector<std::string> CatalogModelNames();

// Resolves `name_or_path`: a catalog name (case-insensitive), else a path to a
// config.json or a directory holding one. An unknown name lists the known ones.
Result<ModelSpec> LoadModel(const std::string& name_or_path);

}  // namespace goodput
