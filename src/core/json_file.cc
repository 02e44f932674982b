#include "core/json_file.h"

#include <cmath>
#include <filesystem>
#include <fstream>

#include <boost/json.hpp>
#include <fmt/format.h>

namespace goodput {

Result<std::string> ReadTextFile(const std::string& path, const std::string& what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::NotFound(fmt::format("cannot read {} '{}'", what, path));
  std::string text;
  char block[1 << 16];
  while (in.read(block, sizeof block) || in.gcount() > 0) {
    text.append(block, static_cast<size_t>(in.gcount()));
    if (text.size() > kMaxInputFileBytes) {
      return Status::InvalidArgument(
          fmt::format("{} '{}' is larger than {} MiB", what, path, kMaxInputFileBytes >> 20));
    }
  }
  if (in.bad()) return Status::IoError(fmt::format("cannot read {} '{}'", what, path));
  return text;
}

Result<boost::json::value> ReadJsonFile(const std::string& path, const std::string& what) {
  GOODPUT_ASSIGN_OR_RETURN(std::string text, ReadTextFile(path, what));
  boost::system::error_code ec;
  boost::json::value v = boost::json::parse(text, ec);
  if (ec) return Status::InvalidArgument(fmt::format("{}: not valid JSON ({})", path, ec.message()));
  return v;
}

boost::json::value JsonNumber(double x) {
  return std::isfinite(x) ? boost::json::value(x) : boost::json::value(nullptr);
}

Status WriteFileAtomically(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    f << text;
    f.close();
    if (!f) {
      std::error_code ignored;
      std::filesystem::remove(tmp, ignored);
      return Status::IoError("cannot write " + path);
    }
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) return Status::IoError("cannot write " + path + ": " + ec.message());
  return Status::Ok();
}

}  // namespace goodput
