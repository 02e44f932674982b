#include "workload/trace.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <ctime>
#include <sstream>

#include <boost/json.hpp>
#include <fmt/format.h>

#include "core/json_file.h"
#include "core/text.h"
#include "workload/length_dist.h"

namespace goodput {
namespace {

// A CSV field, trimmed and without surrounding quotes.
std::string Field(std::string_view s) {
  s = Trim(s);
  if (s.size() >= 2 && s.front() == '"' && s.back() == '"') s = s.substr(1, s.size() - 2);
  return std::string(s);
}

std::vector<std::string> SplitCsv(const std::string& line) {
  std::vector<std::string> out;
  size_t start = 0;
  for (size_t i = 0; i <= line.size(); ++i) {
    if (i == line.size() || line[i] == ',') {
      out.push_back(Field(std::string_view(line).substr(start, i - start)));
      start = i + 1;
    }
  }
  return out;
}

int FindColumn(const std::vector<std::string>& header, std::initializer_list<const char*> names) {
  for (size_t i = 0; i < header.size(); ++i) {
    for (const char* n : names) {
      if (Lower(header[i]) == n) return static_cast<int>(i);
    }
  }
  return -1;
}

// Seconds from a number, or from an Azure-style "YYYY-MM-DD HH:MM:SS.fffffff".
bool ParseTime(const std::string& s, double* out) {
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (end && *end == '\0' && !s.empty() && std::isfinite(v)) {
    *out = v;
    return true;
  }
  std::tm tm{};
  const char* rest = strptime(s.c_str(), "%Y-%m-%d %H:%M:%S", &tm);
  if (!rest) return false;
  double frac = 0;
  if (*rest == '.') {
    frac = std::strtod(rest, &end);
    if (!end || *end != '\0') return false;
  } else if (*rest != '\0') {
    return false;
  }
  *out = static_cast<double>(timegm(&tm)) + frac;
  return true;
}

bool ParseCount(const std::string& s, int64_t* out) {
  char* end = nullptr;
  const long long v = std::strtoll(s.c_str(), &end, 10);
  if (s.empty() || !end || *end != '\0' || v < 0) return false;
  *out = v;
  return true;
}

Result<std::vector<TraceRow>> ReadCsv(std::istream& in, const std::string& path, const std::string& header_line,
                                      bool* untimed) {
  const auto header = SplitCsv(header_line);
  const int t = FindColumn(header, {"timestamp", "time", "arrival_time", "arrived_at"});
  const int i = FindColumn(header, {"input_length", "input_tokens", "prompt_tokens", "contexttokens", "request tokens",
                                    "num_prefill_tokens"});
  const int o = FindColumn(header, {"output_length", "output_tokens", "completion_tokens", "generatedtokens",
                                    "response tokens", "num_decode_tokens"});
  const int c = FindColumn(header, {"class"});
  if ((t < 0 && !untimed) || i < 0 || o < 0) {
    return Status::InvalidArgument(fmt::format(
        "{}:1: the header needs a timestamp, an input-length and an output-length column (got: {})", path,
        header_line));
  }
  if (untimed) *untimed = t < 0;
  std::vector<TraceRow> rows;
  std::string line;
  for (int lineno = 2; std::getline(in, line); ++lineno) {
    if (Trim(line).empty()) continue;
    const auto f = SplitCsv(line);
    TraceRow r;
    if (static_cast<int>(f.size()) <= std::max({t, i, o, c}) || (t >= 0 && !ParseTime(f[t], &r.t)) ||
        !ParseCount(f[i], &r.input_tokens) || !ParseCount(f[o], &r.output_tokens)) {
      return Status::InvalidArgument(fmt::format("{}:{}: malformed row '{}'", path, lineno, line));
    }
    if (c >= 0) r.request_class = f[c];
    rows.push_back(std::move(r));
  }
  return rows;
}

Result<std::vector<TraceRow>> ReadJsonl(std::istream& in, const std::string& path, std::string first) {
  std::vector<TraceRow> rows;
  std::string line = std::move(first);
  for (int lineno = 1;; ++lineno) {
    if (!Trim(line).empty()) {
      boost::system::error_code ec;
      auto v = boost::json::parse(line, ec);
      auto num = [&](const char* key, double* out) {
        if (ec || !v.is_object() || !v.as_object().contains(key)) return false;
        const auto& x = v.at(key);
        if (!x.is_number()) return false;
        *out = x.to_number<double>();
        return std::isfinite(*out) && *out >= 0;
      };
      double ts = 0, in_len = 0, out_len = 0;
      if (!num("timestamp", &ts) || !num("input_length", &in_len) || !num("output_length", &out_len)) {
        return Status::InvalidArgument(fmt::format(
            "{}:{}: needs numeric \"timestamp\" (ms), \"input_length\" and \"output_length\"", path, lineno));
      }
      if (std::max(in_len, out_len) > static_cast<double>(kMaxTokenLength)) {
        return Status::InvalidArgument(
            fmt::format("{}:{}: a length over the limit of {} tokens (16M)", path, lineno, kMaxTokenLength));
      }
      TraceRow r{ts / 1000.0, static_cast<int64_t>(in_len), static_cast<int64_t>(out_len), "", {}};
      if (auto it = v.as_object().find("class"); it != v.as_object().end() && it->value().is_string()) {
        r.request_class = std::string(it->value().as_string());
      }
      if (auto it = v.as_object().find("hash_ids"); it != v.as_object().end() && it->value().is_array()) {
        for (const auto& h : it->value().as_array()) {
          if (!h.is_int64() && !h.is_uint64()) {
            return Status::InvalidArgument(fmt::format("{}:{}: \"hash_ids\" must hold whole numbers", path, lineno));
          }
          r.block_hashes.push_back(h.to_number<int64_t>());
        }
      }
      rows.push_back(std::move(r));
    }
    if (!std::getline(in, line)) break;
  }
  return rows;
}

}  // namespace

Result<std::vector<TraceRow>> ReadTrace(const std::string& path, bool skip_empty, int64_t* skipped, bool* untimed) {
  GOODPUT_ASSIGN_OR_RETURN(const std::string text, ReadTextFile(path, "trace"));
  std::istringstream in(text);
  std::string first;
  if (!std::getline(in, first)) return Status::InvalidArgument(fmt::format("{}: empty trace", path));
  if (untimed) *untimed = false;
  auto rows = Trim(first).rfind('{', 0) == 0 ? ReadJsonl(in, path, first) : ReadCsv(in, path, first, untimed);
  if (!rows.ok()) return rows;
  if (skip_empty) {
    const auto empty = [](const TraceRow& r) { return r.input_tokens < 1 || r.output_tokens < 1; };
    const auto n = std::count_if(rows->begin(), rows->end(), empty);
    rows->erase(std::remove_if(rows->begin(), rows->end(), empty), rows->end());
    if (skipped) *skipped = n;
  }
  if (rows->empty()) return Status::InvalidArgument(fmt::format("{}: no requests in the trace", path));
  const double t0 = rows->front().t;
  for (size_t k = 0; k < rows->size(); ++k) {
    if (k > 0 && (*rows)[k].t < (*rows)[k - 1].t) {
      return Status::InvalidArgument(fmt::format("{}: timestamps go backwards at request {}", path, k + 1));
    }
    if (std::max((*rows)[k].input_tokens, (*rows)[k].output_tokens) > kMaxTokenLength) {
      return Status::InvalidArgument(
          fmt::format("{}: request {} has a length over the limit of {} tokens (16M)", path, k + 1, kMaxTokenLength));
    }
    if ((*rows)[k].input_tokens < 1 || (*rows)[k].output_tokens < 1) {
      return Status::InvalidArgument(fmt::format(
          "{}: request {} has a zero length (a failed request? `skip_empty: true` under the arrival leaves such out)",
          path, k + 1));
    }
  }
  if (const double span = rows->back().t - t0; span > kMaxTraceSpanSeconds) {
    return Status::InvalidArgument(fmt::format(
        "{}: the trace spans {:g} s, more than a year (a timestamp typo, or milliseconds in a CSV column of seconds?)",
        path, span));
  }
  for (auto& r : *rows) r.t -= t0;
  return rows;
}

}  // namespace goodput
