#include "cpu/safetensors.h"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>

#include <boost/json.hpp>
#include <fmt/format.h>

#include "cpu/kernels.h"

namespace goodput::cpu {
namespace {

float HalfToFloat(uint16_t h) {
  const uint32_t sign = (h >> 15) & 1, exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
  float v;
  if (exp == 0) v = std::ldexp(static_cast<float>(mant), -24);
  else if (exp == 31) v = mant ? NAN : INFINITY;
  else v = std::ldexp(1.0f + static_cast<float>(mant) / 1024.0f, static_cast<int>(exp) - 15);
  return sign ? -v : v;
}

Result<Tensor> Decode(const std::string& name, const boost::json::object& info, const std::string& data,
                      const std::string& path) {
  auto bad = [&](const char* what) {
    return Status::InvalidArgument(fmt::format("{}: tensor '{}': {}", path, name, what));
  };
  if (!info.contains("dtype") || !info.at("dtype").is_string() || !info.contains("shape") ||
      !info.at("shape").is_array() || !info.contains("data_offsets") || !info.at("data_offsets").is_array()) {
    return bad("needs dtype, shape and data_offsets");
  }
  Tensor t;
  for (const auto& d : info.at("shape").as_array()) {
    if (!d.is_int64() || d.as_int64() < 0) return bad("shape must list non-negative integers");
    t.shape.push_back(d.as_int64());
  }
  const auto& off = info.at("data_offsets").as_array();
  if (off.size() != 2 || !off[0].is_int64() || !off[1].is_int64()) return bad("data_offsets must be [begin, end]");
  const int64_t begin = off[0].as_int64(), end = off[1].as_int64();
  const std::string dtype(info.at("dtype").as_string());
  const int64_t elem = dtype == "F32" ? 4 : (dtype == "BF16" || dtype == "F16") ? 2 : 0;
  if (elem == 0) return bad("dtype must be F32, BF16 or F16");
  if (begin < 0 || end < begin || end > static_cast<int64_t>(data.size()) || end - begin != t.numel() * elem) {
    return bad("data_offsets do not match the shape or the file");
  }
  t.data.resize(static_cast<size_t>(t.numel()));
  const char* p = data.data() + begin;
  for (int64_t i = 0; i < t.numel(); ++i) {
    if (elem == 4) {
      std::memcpy(&t.data[i], p + 4 * i, 4);
    } else {
      uint16_t h;
      std::memcpy(&h, p + 2 * i, 2);
      t.data[i] = dtype == "BF16" ? Bf16ToFloat(h) : HalfToFloat(h);
    }
  }
  return t;
}

}  // namespace

int64_t Tensor::numel() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

Result<std::map<std::string, Tensor>> ReadSafetensors(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::NotFound(fmt::format("cannot read '{}'", path));
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (bytes.size() < 8) return Status::InvalidArgument(path + ": too short for a safetensors file");
  uint64_t header_len = 0;
  for (int i = 7; i >= 0; --i) header_len = header_len << 8 | static_cast<uint8_t>(bytes[i]);
  if (header_len > bytes.size() - 8) return Status::InvalidArgument(path + ": header length exceeds the file");
  boost::system::error_code ec;
  auto header = boost::json::parse(std::string_view(bytes).substr(8, header_len), ec);
  if (ec || !header.is_object()) return Status::InvalidArgument(path + ": header is not a JSON object");
  const std::string data = bytes.substr(8 + header_len);
  std::map<std::string, Tensor> out;
  for (const auto& [key, value] : header.as_object()) {
    if (key == "__metadata__") continue;
    if (!value.is_object())
      return Status::InvalidArgument(fmt::format("{}: entry '{}' is not an object", path, std::string(key)));
    GOODPUT_ASSIGN_OR_RETURN(Tensor t, Decode(std::string(key), value.as_object(), data, path));
    out.emplace(std::string(key), std::move(t));
  }
  return out;
}

Result<std::map<std::string, Tensor>> ReadSafetensorsDir(const std::string& dir) {
  std::vector<std::string> files;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    if (e.path().extension() == ".safetensors") files.push_back(e.path().string());
  }
  if (files.empty()) return Status::NotFound(fmt::format("no .safetensors files in '{}'", dir));
  std::sort(files.begin(), files.end());
  std::map<std::string, Tensor> all;
  for (const auto& f : files) {
    GOODPUT_ASSIGN_OR_RETURN(auto part, ReadSafetensors(f));
    all.merge(part);
  }
  return all;
}

Status WriteSafetensors(const std::string& path, const std::map<std::string, Tensor>& tensors,
                        const std::string& dtype) {
  if (dtype != "F32" && dtype != "BF16") return Status::InvalidArgument("write F32 or BF16");
  const int64_t elem = dtype == "F32" ? 4 : 2;
  boost::json::object header;
  std::string data;
  for (const auto& [name, t] : tensors) {
    const int64_t begin = static_cast<int64_t>(data.size());
    for (float v : t.data) {
      if (elem == 4) {
        data.append(reinterpret_cast<const char*>(&v), 4);
      } else {
        const uint16_t b = FloatToBf16(v);
        data.append(reinterpret_cast<const char*>(&b), 2);
      }
    }
    header[name] = boost::json::object{{"dtype", dtype},
                                       {"shape", boost::json::value_from(t.shape)},
                                       {"data_offsets", boost::json::array{begin, static_cast<int64_t>(data.size())}}};
  }
  const std::string h = boost::json::serialize(header);
  std::ofstream out(path, std::ios::binary);
  if (!out) return Status::IoError(fmt::format("cannot write '{}'", path));
  uint64_t len = h.size();
  for (int i = 0; i < 8; ++i) out.put(static_cast<char>((len >> (8 * i)) & 0xff));
  out << h << data;
  return out ? Status::Ok() : Status::IoError(fmt::format("writing '{}' failed", path));
}

}  // namespace goodput::cpu
