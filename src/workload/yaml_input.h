// Our YAML inputs (workloads, published figures): one parse and one error
// shape, "FILE:LINE: what is wrong".
#pragma once

#include <string>

#include <yaml-cpp/yaml.h>

#include "core/status.h"

namespace goodput {

// An InvalidArgument naming `where` and the line of node `n` (just `where`
// when the node is missing, as a lookup of an absent key gives).
Status YamlError(const std::string& where, const YAML::Node& n, const std::string& msg);

// The mapping `text` holds. Errors: not YAML ("FILE:LINE: not valid YAML"),
// or not a mapping ("FILE: " + `not_a_mapping`).
Result<YAML::Node> ParseYamlMapping(const std::string& text, const std::string& where,
                                    const std::string& not_a_mapping);

}  // namespace goodput
