#include "workload/yaml_error.h"

#include <fmt/format.h>

namespace goodput {

Status YamlError(const std::string& where, const YAML::Node& n, const std::string& msg) {
  int line = -1;
  try {
    if (n) line = n.Mark().line;
  } catch (const YAML::Exception&) {  // a missing key's node has no position
  }
  if (line >= 0) return Status::InvalidArgument(fmt::format("{}:{}: {}", where, line + 1, msg));
  return Status::InvalidArgument(fmt::format("{}: {}", where, msg));
}

}  // namespace goodput
