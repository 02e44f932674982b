#include "core/json_file.h"

#include <fstream>
#include <sstream>

#include <boost/json.hpp>
#include <fmt/format.h>

namespace goodput {

Result<boost::json::value> ReadJsonFile(const std::string& path, const std::string& what) {
  std::ifstream in(path);
  if (!in) return Status::NotFound(fmt::format("cannot read {} '{}'", what, path));
  std::stringstream buf;
  buf << in.rdbuf();
  boost::system::error_code ec;
  boost::json::value v = boost::json::parse(buf.str(), ec);
  if (ec) return Status::InvalidArgument(fmt::format("{}: not valid JSON ({})", path, ec.message()));
  return v;
}

}  // namespace goodput
