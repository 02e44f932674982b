#include "core/request_record.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <sstream>

#include <fmt/format.h>

namespace goodput {

std::optional<double> Ttft(const RequestRecord& r) {
  if (!r.t_first) return std::nullopt;
  return *r.t_first - r.t_arrival;
}

std::optional<double> Tpot(const RequestRecord& r) {
  if (r.n_out < 2 || !r.t_first || !r.t_last) return std::nullopt;
  return (*r.t_last - *r.t_first) / static_cast<double>(r.n_out - 1);
}

std::optional<double> E2e(const RequestRecord& r) {
  if (!r.t_last) return std::nullopt;
  return *r.t_last - r.t_arrival;
}

double SendLag(const RequestRecord& r) { return r.t_sent - r.t_arrival; }

void AppendItls(const RequestRecord& r, std::vector<double>& out) {
  for (size_t i = 1; i < r.chunks.size(); ++i) {
    const int32_t k = r.chunks[i].tokens > 0 ? r.chunks[i].tokens : 1;
    const double gap = (r.chunks[i].t - r.chunks[i - 1].t) / k;
    out.insert(out.end(), static_cast<size_t>(k), gap);
  }
}

std::vector<double> Itls(const RequestRecord& r) {
  std::vector<double> out;
  AppendItls(r, out);
  return out;
}

void SpreadTokensOverChunks(std::vector<TokenChunk>& chunks, int64_t n_out) {
  const auto k = static_cast<int64_t>(chunks.size());
  for (int64_t i = 0; i < k; ++i) {
    chunks[i].tokens = static_cast<int32_t>((i + 1) * n_out / k - i * n_out / k);
  }
}

double TokensServedIn(const RequestRecord& r, double start, double end) {
  const auto inside = [&](double t) { return t >= start && t < end; };
  if (!r.chunks.empty()) {
    double n = 0;
    for (const TokenChunk& c : r.chunks) n += inside(c.t) ? c.tokens : 0;
    return n;
  }
  if (!r.t_first || r.n_out <= 0) return 0;
  if (r.n_out == 1 || !r.t_last || *r.t_last <= *r.t_first)
    return inside(*r.t_first) ? static_cast<double>(r.n_out) : 0;
  // Token i (0-based) at t_first + i * step: count the i with start <= t < end.
  const double step = (*r.t_last - *r.t_first) / static_cast<double>(r.n_out - 1);
  const auto first_at_or_after = [&](double t) {
    return std::clamp<double>(std::ceil((t - *r.t_first) / step), 0, static_cast<double>(r.n_out));
  };
  return std::max(0.0, first_at_or_after(end) - first_at_or_after(start));
}

std::string ChunksToText(const std::vector<TokenChunk>& chunks) {
  std::string out;
  for (const TokenChunk& c : chunks) out += fmt::format("{}{:.17g}:{}", out.empty() ? "" : " ", c.t, c.tokens);
  return out;
}

std::vector<TokenChunk> ChunksFromText(const std::string& text) {
  std::vector<TokenChunk> out;
  std::istringstream in(text);
  std::string item;
  while (in >> item) {
    const size_t colon = item.find(':');
    char* end = nullptr;
    TokenChunk c;
    c.t = std::strtod(item.c_str(), &end);
    if (colon == std::string::npos || end != item.c_str() + colon) return {};
    const char* count = item.c_str() + colon + 1;
    c.tokens = static_cast<int32_t>(std::strtol(count, &end, 10));
    if (end == count || *end != '\0' || c.tokens < 0) return {};
    out.push_back(c);
  }
  return out;
}

}  // namespace goodput
