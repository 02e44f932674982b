#include "core/units.h"

#include "core/text.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <string>
#include <utility>

#include <fmt/format.h>

namespace goodput {
namespace {

// "" 1, "k" 1e3, "m" 1e6, "g" 1e9, "t" 1e12, "p" 1e15 (lower case); 0 for anything else.
double SiScale(const std::string& prefix) {
  static const std::pair<const char*, double> kScales[] = {{"", 1},    {"k", 1e3},  {"m", 1e6},
                                                           {"g", 1e9}, {"t", 1e12}, {"p", 1e15}};
  for (const auto& [name, scale] : kScales) {
    if (prefix == name) return scale;
  }
  return 0;
}

// Splits "1.5GiB" into its number (1.5) and unit ("GiB"). The number must use
// plain decimal notation.
Status SplitNumber(std::string_view text, double* number, std::string_view* unit,
                   std::chars_format format = std::chars_format::fixed) {
  std::string_view s = Trim(text);
  if (s.empty()) return Status::InvalidArgument("empty value");
  const char* begin = s.data();
  const char* end = s.data() + s.size();
  auto [ptr, ec] = std::from_chars(begin, end, *number, format);
  if (ec != std::errc() || ptr == begin) {
    return Status::InvalidArgument(fmt::format("'{}' does not start with a number", text));
  }
  if (!std::isfinite(*number)) return Status::InvalidArgument(fmt::format("'{}' is not finite", text));
  *unit = Trim(std::string_view(ptr, end - ptr));
  return Status::Ok();
}

}  // namespace

Result<double> ParseDuration(std::string_view text) {
  double n = 0;
  std::string_view unit;
  if (Status st = SplitNumber(text, &n, &unit); !st.ok()) return st;
  if (n < 0) return Status::InvalidArgument(fmt::format("duration '{}' is negative", text));
  if (unit.empty()) {
    return Status::InvalidArgument(
        fmt::format("duration '{}' has no unit (write e.g. 100ms or 1.5s)", Trim(text)));
  }
  const std::string u = Lower(unit);
  double scale = 0;
  if (u == "ns") scale = 1e-9;
  else if (u == "us" || u == "\xc2\xb5s") scale = 1e-6;
  else if (u == "ms") scale = 1e-3;
  else if (u == "s" || u == "sec") scale = 1;
  else if (u == "m" || u == "min") scale = 60;
  else if (u == "h") scale = 3600;
  else {
    return Status::InvalidArgument(
        fmt::format("duration '{}' has unknown unit '{}' (use ns, us, ms, s, min, h)", Trim(text), unit));
  }
  return n * scale;
}

Result<int64_t> ParseBytes(std::string_view text) {
  double n = 0;
  std::string_view unit;
  if (Status st = SplitNumber(text, &n, &unit); !st.ok()) return st;
  std::string u = Lower(unit);
  if (!u.empty() && u.back() == 'b') u.pop_back();  // "GiB" -> "gi", "GB" -> "g", "B" -> ""
  double scale = SiScale(u);
  if (u == "ki") scale = 1024.0;
  else if (u == "mi") scale = 1024.0 * 1024;
  else if (u == "gi") scale = 1024.0 * 1024 * 1024;
  else if (u == "ti") scale = 1024.0 * 1024 * 1024 * 1024;
  if (scale == 0) {
    return Status::InvalidArgument(
        fmt::format("size '{}' has unknown unit '{}' (use B, KB, MB, GB, TB, KiB, MiB, GiB, TiB)",
                    Trim(text), unit));
  }
  const double bytes = n * scale;
  if (bytes <= 0) return Status::InvalidArgument(fmt::format("size '{}' must be positive", Trim(text)));
  if (bytes > 9.0e18) return Status::InvalidArgument(fmt::format("size '{}' is too large", Trim(text)));
  return static_cast<int64_t>(std::llround(bytes));
}

Result<int64_t> ParseTokenCount(std::string_view text) {
  double n = 0;
  std::string_view unit;
  if (Status st = SplitNumber(text, &n, &unit); !st.ok()) return st;
  double scale = 0;
  if (unit.empty()) scale = 1;
  else if (unit == "k") scale = 1e3;
  else if (unit == "K") scale = 1024.0;
  else if (unit == "m") scale = 1e6;
  else if (unit == "M") scale = 1024.0 * 1024;
  else if (unit == "g") scale = 1e9;
  else if (unit == "G") scale = 1024.0 * 1024 * 1024;
  else {
    return Status::InvalidArgument(fmt::format(
        "token count '{}' has unknown suffix '{}' (k=1000, K=1024, m=10^6, M=2^20)", Trim(text), unit));
  }
  const double count = n * scale;
  if (count < 1) return Status::InvalidArgument(fmt::format("token count '{}' must be at least 1", Trim(text)));
  if (count != std::floor(count)) {
    return Status::InvalidArgument(fmt::format("token count '{}' is not a whole number", Trim(text)));
  }
  if (count > 1e15) return Status::InvalidArgument(fmt::format("token count '{}' is too large", Trim(text)));
  return static_cast<int64_t>(count);
}

double ToGiB(int64_t bytes) { return static_cast<double>(bytes) / (1024.0 * 1024 * 1024); }

std::string FormatGiB(int64_t bytes, int decimals) {
  return fmt::format("{:.{}f} GiB", ToGiB(bytes), decimals);
}

std::string FormatDuration(double seconds) {
  if (!std::isfinite(seconds)) return "-";
  const double a = std::fabs(seconds);
  if (a >= 1.0) return fmt::format("{:.2f} s", seconds);
  if (a >= 1e-3) return fmt::format("{:.1f} ms", seconds * 1e3);
  return fmt::format("{:.0f} us", seconds * 1e6);
}

std::string FormatCount(int64_t n) {
  std::string digits = std::to_string(n < 0 ? -n : n);
  std::string out;
  int count = 0;
  for (auto it = digits.rbegin(); it != digits.rend(); ++it) {
    if (count > 0 && count % 3 == 0) out.insert(out.begin(), ',');
    out.insert(out.begin(), *it);
    ++count;
  }
  return n < 0 ? "-" + out : out;
}

Result<double> ParseRate(std::string_view text, std::string_view unit) {
  double n = 0;
  std::string_view rest;
  if (Status st = SplitNumber(text, &n, &rest, std::chars_format::general); !st.ok()) return st;
  std::string u = Lower(std::string(Trim(rest)));
  const std::string want = Lower(std::string(unit));
  if (u.size() >= want.size() && u.compare(u.size() - want.size(), want.size(), want) == 0)
    u.resize(u.size() - want.size());
  const double scale = SiScale(u);
  if (scale == 0) {
    return Status::InvalidArgument(fmt::format("'{}' has unknown unit '{}' (use k, M, G, T or P, then {})", Trim(text),
                                               Trim(rest), unit));
  }
  if (!(n > 0)) return Status::InvalidArgument(fmt::format("'{}' must be positive", Trim(text)));
  return n * scale;
}

}  // namespace goodput
