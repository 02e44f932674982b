// Typed, error-naming access to the fields of one JSON object of a config.json.
// Internal to model/.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <boost/json.hpp>

#include "core/status.h"

namespace goodput {

class ConfigFields {
 public:
  // `where` prefixes error messages, e.g. "config.json text_config".
  ConfigFields(const boost::json::object& obj, std::string where) : obj_(obj), where_(std::move(where)) {}

  bool Has(const char* key) const;
  // Present and not null.
  bool HasValue(const char* key) const;

  // Integer field; `fallback` when absent or null. Errors when malformed or
  // negative.
  Result<int64_t> Int(const char* key, std::optional<int64_t> fallback = std::nullopt) const;
  Result<double> Number(const char* key, std::optional<double> fallback = std::nullopt) const;
  Result<bool> Bool(const char* key, bool fallback) const;
  Result<std::string> String(const char* key, std::optional<std::string> fallback = std::nullopt) const;
  Result<std::vector<std::string>> StringList(const char* key) const;

  const boost::json::object& object() const { return obj_; }
  const std::string& where() const { return where_; }

 private:
  Status Missing(const char* key) const;
  Status Malformed(const char* key, const char* expected) const;

  const boost::json::object& obj_;
  std::string where_;
};

}  // namespace goodput
