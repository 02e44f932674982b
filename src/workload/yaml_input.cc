#include "workload/yaml_input.h"

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

Result<YAML::Node> ParseYamlMapping(const std::string& text, const std::string& where,
                                    const std::string& not_a_mapping) {
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    return Status::InvalidArgument(fmt::format("{}:{}: not valid YAML ({})", where, e.mark.line + 1, e.msg));
  }
  if (!root.IsMap()) return Status::InvalidArgument(where + ": " + not_a_mapping);
  return root;
}

}  // namespace goodput
