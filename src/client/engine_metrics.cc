#include "client/engine_metrics.h"

#include <charconv>

#include "core/text.h"

namespace goodput::client {
namespace {

// The closing brace of the label set opening at `open`: label values are
// quoted and may hold braces, spaces and escaped quotes. npos when unclosed.
size_t LabelsEnd(const std::string& line, size_t open) {
  bool quoted = false;
  for (size_t i = open + 1; i < line.size(); ++i) {
    if (quoted && line[i] == '\\') ++i;
    else if (line[i] == '"') quoted = !quoted;
    else if (!quoted && line[i] == '}') return i;
  }
  return std::string::npos;
}

}  // namespace

std::optional<double> PrometheusCounter(std::string_view page, std::string_view name) {
  std::optional<double> sum;
  for (const std::string& line : Split(std::string(page), '\n')) {
    if (line.size() <= name.size() || line.compare(0, name.size(), name) != 0) continue;
    const char next = line[name.size()];
    if (next != '{' && next != ' ') continue;  // another metric whose name starts with this one
    // The value follows the labels (then an optional timestamp).
    const size_t labels_end = next == '{' ? LabelsEnd(line, name.size()) : name.size();
    if (labels_end == std::string::npos) continue;
    const std::string_view rest = Trim(std::string_view(line).substr(labels_end + 1));
    double value = 0;
    const auto [end, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), value);
    if (ec != std::errc() || (end != rest.data() + rest.size() && *end != ' ')) continue;
    sum = sum.value_or(0) + value;
  }
  return sum;
}

EngineMetrics ScrapeEngineMetrics(const Endpoint& e) {
  EngineMetrics m;
  auto page = HttpGet(e, "/metrics");
  if (!page.ok()) return m;
  m.preemptions = PrometheusCounter(*page, "vllm:num_preemptions_total");
  return m;
}

}  // namespace goodput::client
