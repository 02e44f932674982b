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

EngineMetrics ParseEngineMetrics(std::string_view page) {
  EngineMetrics m;
  m.preemptions = PrometheusCounter(page, "vllm:num_preemptions_total");
  m.spec_drafts = PrometheusCounter(page, "vllm:spec_decode_num_drafts_total");
  m.spec_draft_tokens = PrometheusCounter(page, "vllm:spec_decode_num_draft_tokens_total");
  m.spec_accepted_tokens = PrometheusCounter(page, "vllm:spec_decode_num_accepted_tokens_total");
  m.prefix_queries = PrometheusCounter(page, "vllm:prefix_cache_queries_total");
  m.prefix_hits = PrometheusCounter(page, "vllm:prefix_cache_hits_total");
  return m;
}

EngineMetrics ScrapeEngineMetrics(const Endpoint& e) {
  auto page = HttpGet(e, "/metrics");
  return page.ok() ? ParseEngineMetrics(*page) : EngineMetrics{};
}

EngineCounters CountersBetween(const EngineMetrics& before, const EngineMetrics& after) {
  EngineCounters c;
  if (before.preemptions && after.preemptions) {
    c.preemptions = static_cast<int64_t>(*after.preemptions - *before.preemptions);
  }
  const auto delta = [](const std::optional<double>& b, const std::optional<double>& a) -> std::optional<double> {
    if (!a || !b) return std::nullopt;
    return *a - *b;
  };
  const auto drafts = delta(before.spec_drafts, after.spec_drafts);
  const auto tokens = delta(before.spec_draft_tokens, after.spec_draft_tokens);
  const auto accepted = delta(before.spec_accepted_tokens, after.spec_accepted_tokens);
  if (drafts && tokens && accepted && *drafts > 0) c.spec_decode = SpecDecodeCounts{*drafts, *tokens, *accepted};
  const auto queries = delta(before.prefix_queries, after.prefix_queries);
  const auto hits = delta(before.prefix_hits, after.prefix_hits);
  if (queries && hits && *queries > 0) c.prefix_cache = PrefixCacheCounts{*queries, *hits};
  return c;
}

EngineCounters FleetCountersBetween(const std::vector<EngineMetrics>& before, const std::vector<EngineMetrics>& after,
                                    const std::vector<int64_t>& routed) {
  if (before.size() == 1) return CountersBetween(before[0], after[0]);
  EngineCounters sum;
  bool preemptions = true;
  for (size_t k = 0; k < before.size(); ++k) {
    const EngineCounters c = CountersBetween(before[k], after[k]);
    preemptions = preemptions && c.preemptions.has_value();
    if (preemptions) sum.preemptions = sum.preemptions.value_or(0) + *c.preemptions;
    if (c.spec_decode) (sum.spec_decode ? *sum.spec_decode : sum.spec_decode.emplace()) += *c.spec_decode;
    if (c.prefix_cache) (sum.prefix_cache ? *sum.prefix_cache : sum.prefix_cache.emplace()) += *c.prefix_cache;
    sum.replicas.push_back(ReplicaCounts{k < routed.size() ? static_cast<double>(routed[k]) : 0, 0,
                                         c.prefix_cache.value_or(PrefixCacheCounts{})});
  }
  if (!preemptions) sum.preemptions.reset();  // one endpoint without the counter: unknown
  return sum;
}

}  // namespace goodput::client
