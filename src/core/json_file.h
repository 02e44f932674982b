// Files the tools read and write: whole text files and JSON documents with
// errors that name the file, and whole files replaced atomically.
#pragma once

#include <string>

#include <boost/json/value.hpp>

#include "core/status.h"

namespace goodput {

// Input files are bounded: a file larger than this (or a device that never
// ends, such as /dev/zero) is refused rather than read into memory.
constexpr size_t kMaxInputFileBytes = 64u << 20;

// The whole of `path`, at most kMaxInputFileBytes. `what` names the file's
// role in errors, e.g. "workload" -> "cannot read workload '/x/w.yaml'"; a
// longer file -> "workload '/x/w.yaml' is larger than 64 MiB".
Result<std::string> ReadTextFile(const std::string& path, const std::string& what);

// Reads and parses `path`. `what` names the file's role in errors, e.g.
// "model config" -> "cannot read model config '/x/config.json'".
Result<boost::json::value> ReadJsonFile(const std::string& path, const std::string& what);

// `x` as a JSON number, or null when it is not finite (JSON has no NaN).
boost::json::value JsonNumber(double x);

// Writes `text` to `path` through a temporary beside it and a rename, so a
// reader never sees half a file and a failed write leaves the old one.
Status WriteFileAtomically(const std::string& path, const std::string& text);

}  // namespace goodput
