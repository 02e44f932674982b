// The one error shape of our YAML files: "FILE:LINE: what is wrong".
#pragma once

#include <string>

#include <yaml-cpp/yaml.h>

#include "core/status.h"

namespace goodput {

// An InvalidArgument naming `where` and the line of node `n` (just `where`
// when the node is missing, as a lookup of an absent key gives).
Status YamlError(const std::string& where, const YAML::Node& n, const std::string& msg);

}  // namespace goodput
