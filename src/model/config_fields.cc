#include "model/config_fields.h"

#include <cmath>

#include <fmt/format.h>

namespace goodput {

bool ConfigFields::Has(const char* key) const { return obj_.contains(key); }

bool ConfigFields::HasValue(const char* key) const {
  auto it = obj_.find(key);
  return it != obj_.end() && !it->value().is_null();
}

Status ConfigFields::Missing(const char* key) const {
  return Status::InvalidArgument(fmt::format("{}: missing field \"{}\"", where_, key));
}

Status ConfigFields::Malformed(const char* key, const char* expected) const {
  return Status::InvalidArgument(fmt::format("{}: field \"{}\" must be {}, got {}", where_, key, expected,
                                             boost::json::serialize(obj_.at(key))));
}

Result<int64_t> ConfigFields::Int(const char* key, std::optional<int64_t> fallback) const {
  if (!HasValue(key)) {
    if (fallback) return *fallback;
    return Missing(key);
  }
  const auto& v = obj_.at(key);
  int64_t out = 0;
  if (v.is_int64()) {
    out = v.as_int64();
  } else if (v.is_uint64()) {
    out = static_cast<int64_t>(v.as_uint64());
  } else if (v.is_double() && std::floor(v.as_double()) == v.as_double() && std::fabs(v.as_double()) < 0x1p62) {
    out = static_cast<int64_t>(v.as_double());
  } else {
    return Malformed(key, "a whole number");
  }
  if (out < 0) return Malformed(key, "a non-negative number");
  if (out > (int64_t{1} << 40)) return Malformed(key, "below 2^40");  // products of such fields would overflow
  return out;
}

Result<double> ConfigFields::Number(const char* key, std::optional<double> fallback) const {
  if (!HasValue(key)) {
    if (fallback) return *fallback;
    return Missing(key);
  }
  const auto& v = obj_.at(key);
  if (v.is_double()) return v.as_double();
  if (v.is_int64()) return static_cast<double>(v.as_int64());
  if (v.is_uint64()) return static_cast<double>(v.as_uint64());
  return Malformed(key, "a number");
}

Result<bool> ConfigFields::Bool(const char* key, bool fallback) const {
  if (!HasValue(key)) return fallback;
  const auto& v = obj_.at(key);
  if (!v.is_bool()) return Malformed(key, "true or false");
  return v.as_bool();
}

Result<std::string> ConfigFields::String(const char* key, std::optional<std::string> fallback) const {
  if (!HasValue(key)) {
    if (fallback) return *fallback;
    return Missing(key);
  }
  const auto& v = obj_.at(key);
  if (!v.is_string()) return Malformed(key, "a string");
  return std::string(v.as_string());
}

Result<std::vector<std::string>> ConfigFields::StringList(const char* key) const {
  if (!HasValue(key)) return Missing(key);
  const auto& v = obj_.at(key);
  if (!v.is_array()) return Malformed(key, "a list of strings");
  std::vector<std::string> out;
  for (const auto& e : v.as_array()) {
    if (!e.is_string()) return Malformed(key, "a list of strings");
    out.emplace_back(e.as_string());
  }
  return out;
}

}  // namespace goodput
