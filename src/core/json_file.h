// Reading a JSON document from a file, with errors that name the file.
#pragma once

#include <string>

#include <boost/json/value.hpp>

#include "core/status.h"

namespace goodput {

// Reads and parses `path`. `what` names the file's role in errors, e.g.
// "model config" -> "cannot read model config '/x/config.json'".
Result<boost::json::value> ReadJsonFile(const std::string& path, const std::string& what);

}  // namespace goodput
