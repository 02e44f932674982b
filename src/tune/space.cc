#include "tune/space.h"

#include <charconv>
#include <cmath>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/text.h"
#include "core/units.h"

namespace goodput {
namespace {

std::optional<double> Decimal(std::string_view s) {
  double v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

// Whole numbers: the ends and the powers of two between them (doubling
// stops before it could overflow).
std::vector<std::string> WholeRange(int64_t lo, int64_t hi) {
  std::vector<std::string> out = {std::to_string(lo)};
  for (int64_t p = 1; p < hi && out.size() <= kMaxValuesPerDimension; p = p > hi / 2 ? hi : p * 2) {
    if (p > lo) out.push_back(std::to_string(p));
  }
  if (hi > lo) out.push_back(std::to_string(hi));
  return out;
}

// "512MiB", "1GiB": the largest binary unit that divides the size exactly.
std::string SizeText(int64_t bytes) {
  constexpr std::pair<int64_t, const char*> kUnits[] = {
      {int64_t{1} << 40, "TiB"}, {int64_t{1} << 30, "GiB"}, {int64_t{1} << 20, "MiB"}, {int64_t{1} << 10, "KiB"}};
  for (const auto& [unit, name] : kUnits) {
    if (bytes % unit == 0) return std::to_string(bytes / unit) + name;
  }
  return std::to_string(bytes);
}

std::vector<std::string> SizeRange(int64_t lo, int64_t hi) {
  std::vector<std::string> out;
  for (int64_t b = lo; b < hi && out.size() < kMaxValuesPerDimension; b *= 2) out.push_back(SizeText(b));
  out.push_back(SizeText(hi));
  return out;
}

std::vector<std::string> DecimalRange(double lo, double hi) {
  if (hi == lo) return {fmt::format("{:g}", lo)};
  std::vector<std::string> out;
  for (int i = 0; i < 4; ++i) out.push_back(fmt::format("{:.4g}", lo + (hi - lo) * i / 3));
  return out;
}

Result<std::vector<std::string>> ExpandRange(const std::string& flag, std::string_view lo_text,
                                             std::string_view hi_text) {
  const auto fail = [&](const std::string& why) {
    return Status::InvalidArgument(fmt::format("--space: {}={}..{}: {}", flag, lo_text, hi_text, why));
  };
  if (auto lo = ParseWholeNumber(lo_text), hi = ParseWholeNumber(hi_text); lo && hi) {
    if (*lo < 0 || *hi < *lo) return fail("the range must run from a number >= 0 up to one at least as large");
    if (*lo == 0 && *hi > 0) return fail("a range doubles, so it cannot start at 0 (list the values: 0|2|4)");
    return WholeRange(*lo, *hi);
  }
  if (auto lo = Decimal(lo_text), hi = Decimal(hi_text); lo && hi) {
    if (*hi < *lo) return fail("the range's upper end is below its lower end");
    return DecimalRange(*lo, *hi);
  }
  auto lo = ParseBytes(lo_text), hi = ParseBytes(hi_text);
  if (!lo.ok() || !hi.ok()) return fail("a range's ends must both be whole numbers, decimals or sizes (256MiB)");
  if (*hi < *lo) return fail("the range's upper end is below its lower end");
  return SizeRange(*lo, *hi);
}

Result<Dimension> ParseDimension(std::string_view text) {
  const std::string item(Trim(text));
  const size_t eq = item.find('=');
  if (eq == std::string::npos) {
    return Status::InvalidArgument(fmt::format("--space: '{}' must look like FLAG=LOW..HIGH or FLAG=A|B|C", item));
  }
  Dimension d;
  d.flag = std::string(Trim(item.substr(0, eq)));
  while (d.flag.rfind('-', 0) == 0) d.flag.erase(0, 1);
  const std::string body(Trim(item.substr(eq + 1)));
  if (d.flag.empty() || body.empty())
    return Status::InvalidArgument(fmt::format("--space: '{}' has an empty flag or value", item));
  if (const size_t dots = body.find(".."); dots != std::string::npos && body.find('|') == std::string::npos) {
    GOODPUT_ASSIGN_OR_RETURN(d.values, ExpandRange(d.flag, Trim(body.substr(0, dots)), Trim(body.substr(dots + 2))));
    d.ordered = true;
  } else {
    for (std::string_view v : Split(body, '|')) {
      if (Trim(v).empty()) return Status::InvalidArgument(fmt::format("--space: '{}' has an empty value", item));
      d.values.emplace_back(Trim(v));
    }
  }
  if (d.values.size() > kMaxValuesPerDimension) {
    return Status::InvalidArgument(
        fmt::format("--space: {} has {} values; at most {}", d.flag, d.values.size(), kMaxValuesPerDimension));
  }
  return d;
}

}  // namespace

int64_t SearchSpace::GridSize() const {
  int64_t n = 1;
  for (const Dimension& d : dimensions) {
    n = std::min<int64_t>(n * static_cast<int64_t>(d.values.size()), 1'000'000'000'000);
  }
  return n;
}

Setting SearchSpace::At(const std::vector<size_t>& indices) const {
  Setting s;
  for (size_t i = 0; i < dimensions.size(); ++i)
    s.flags.push_back({dimensions[i].flag, dimensions[i].values[indices[i]]});
  return s;
}

std::string SearchSpace::Describe() const {
  std::string out;
  for (const Dimension& d : dimensions) {
    if (!out.empty()) out += ", ";
    const std::string values = d.ordered && d.values.size() > 2 ? fmt::format("{} values: {}..{}", d.values.size(),
                                                                              d.values.front(), d.values.back())
                                                                : fmt::format("{}", fmt::join(d.values, "|"));
    out += fmt::format("{} ({})", d.flag, values);
  }
  return out;
}

Result<SearchSpace> ParseSearchSpace(const std::string& text) {
  if (text.size() > kMaxSpaceText) {
    return Status::InvalidArgument(fmt::format("--space: {} characters; at most {}", text.size(), kMaxSpaceText));
  }
  SearchSpace space;
  for (std::string_view item : Split(text, ',')) {
    if (Trim(item).empty()) continue;
    GOODPUT_ASSIGN_OR_RETURN(Dimension d, ParseDimension(item));
    for (const Dimension& seen : space.dimensions) {
      if (seen.flag == d.flag) return Status::InvalidArgument(fmt::format("--space: {} is given twice", d.flag));
    }
    space.dimensions.push_back(std::move(d));
    if (space.dimensions.size() > kMaxDimensions) {
      return Status::InvalidArgument(fmt::format("--space: more than {} flags", kMaxDimensions));
    }
  }
  if (space.dimensions.empty()) return Status::InvalidArgument("--space: no flag to search");
  return space;
}

}  // namespace goodput
