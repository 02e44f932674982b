#include "plan/plan_report.h"

#include <algorithm>
#include <cmath>

#include <boost/json.hpp>
#include <fmt/format.h>

#include "core/text.h"
#include "core/units.h"

namespace goodput {
namespace json = boost::json;
namespace {

std::string Tag(const MemoryItem& m) { return m.measured ? "measured" : "estimate"; }

std::string Gib(int64_t b) { return fmt::format("{:.2f}", ToGiB(b)); }

std::string Header(const Plan& p) {
  const PlanOptions& o = p.options;
  std::string gpus = fmt::format("{} GPU{}", o.tensor_parallel, o.tensor_parallel > 1 ? "s, tensor parallel" : "");
  // Data parallel: the figures below are one replica's, per GPU.
  if (o.data_parallel > 1) {
    gpus += fmt::format(" per replica, {} replicas, {} GPUs in all", o.data_parallel, MoeGroupSize(o));
  }
  if (o.expert_parallel && p.model.IsMoe()) gpus += fmt::format("; whole experts over {} GPUs", MoeGroupSize(o));
  const std::string weights = WeightPrecisionLabel(p.precision, p.model);
  return fmt::format("goodput plan: {} on {} ({}), weights {}, KV cache {}, max model length {}\n\n", p.model.name,
                     o.gpu, gpus, weights, DTypeName(p.kv_dtype), FormatCount(o.engine.scheduler.max_model_len));
}

// Which of the profiling run's two peaks the estimate is, so the reader knows
// the knob: --max-num-seqs for the sampler's, the token budget for the forward's.
std::string ActivationSource(const Plan& p) {
  const SchedulerConfig& c = p.options.engine.scheduler;
  if (p.activation_peak == "forward") {
    return fmt::format(", the forward over {} tokens", FormatCount(c.max_num_batched_tokens));
  }
  if (p.activation_peak == "sampler") {
    return fmt::format(", the sampler for {} sequences",
                       FormatCount(std::min(c.max_num_seqs, c.max_num_batched_tokens)));
  }
  return "";
}

std::string MemorySection(const Plan& p) {
  const PlanOptions& o = p.options;
  std::string s = fmt::format("Memory per GPU{:>33}\n", "GiB");
  auto row = [&](const std::string& label, int64_t bytes, const std::string& note) {
    s += fmt::format("  {:<36}{:>9}{}\n", label, Gib(bytes), note.empty() ? "" : "   " + note);
  };
  row(o.total_is_nominal ? "total (nominal)" : "total", p.total, "");
  if (o.mem_fraction_static) {
    row(fmt::format("requested (x {:.2f}, SGLang's)", *o.mem_fraction_static), p.requested, "");
  } else if (!o.engine.cache.kv_cache_memory) {
    row(fmt::format("requested (x {:.2f})", o.gpu_memory_utilization), p.requested, "");
  }
  const double padding = ExpertPaddingFactor(p.precision, p.model, MoeGroupSize(o), o.expert_parallel);
  const std::string padded = padding > 1 && !p.weights.measured
                                 ? fmt::format(", experts padded +{:.1f}% for vLLM's {} MoE kernel",
                                               (padding - 1) * 100, p.precision.expert_padding.backend)
                                 : "";
  row(fmt::format("weights ({}, {:.2f}B params)", p.precision.name, p.params.total() / 1e9), p.weights.bytes,
      Tag(p.weights) + padded);
  row(o.mem_fraction_static ? "activation peak (outside the share)" : "activation peak (profiling run)",
      p.activation.bytes, Tag(p.activation) + ActivationSource(p));
  row("non-torch (NCCL, CUDA context)", p.non_torch.bytes, Tag(p.non_torch));
  const char* pool = o.engine.cache.kv_cache_memory ? "KV pool (--kv-cache-memory)"
                     : o.mem_fraction_static        ? "KV pool (less weights, non-torch)"
                                                    : "KV pool (requested - the above)";
  row(pool, p.kv_pool, "");
  row("CUDA graphs (taken from headroom)", p.cuda_graphs.bytes, Tag(p.cuda_graphs));
  if (p.prefill_kv_copy > 0) {
    row("fp8 KV copy, one prefill (headroom)", p.prefill_kv_copy, "not profiled (unquantized query)");
  }
  row(o.engine.cache.kv_cache_memory ? "headroom (total - all of the above)" : "headroom (total - requested)",
      p.headroom, "");
  return s + "\n";
}

std::string SizeText(int64_t bytes) {
  if (bytes >= (int64_t{1} << 30)) return fmt::format("{:.1f} GiB", ToGiB(bytes));
  return fmt::format("{:.1f} MiB", static_cast<double>(bytes) / (1 << 20));
}

std::string KindsSection(const Plan& p) {
  std::string s = fmt::format("What one {}-token sequence keeps, by layer kind\n",
                              FormatCount(p.options.engine.scheduler.max_model_len));
  s += fmt::format("  {:<16}{:>7}{:>20}{:>19}{:>14}{:>9}\n", "kind", "layers", "bytes/token/layer", "bytes/seq/layer",
                   "one sequence", "share");
  for (const auto& k : p.kinds) {
    s += fmt::format("  {:<16}{:>7}{:>20}{:>19}{:>14}{:>8.1f}%\n", LayerKindName(k.kind), k.layers,
                     k.bytes_per_token ? FormatCount(k.bytes_per_token) : "-",
                     k.bytes_per_sequence ? FormatCount(k.bytes_per_sequence) : "-", SizeText(k.bytes_max_len),
                     100 * k.share);
  }
  return s + "\n";
}

std::string GroupsText(const KvLayout& l) {
  std::vector<std::pair<std::string, int>> counts;
  for (const auto& g : l.groups) {
    const std::string name = g.spec.is_state() ? LayerKindName(g.spec.kind) : g.spec.TypeName();
    auto it = std::find_if(counts.begin(), counts.end(), [&](const auto& c) { return c.first == name; });
    if (it == counts.end()) counts.emplace_back(name, 1);
    else ++it->second;
  }
  std::string parts;
  for (const auto& [name, n] : counts) parts += fmt::format("{}{} {}", parts.empty() ? "" : ", ", n, name);
  return fmt::format("{} of {} layers ({}), {} padding layers", l.groups.size(), l.group_size, parts, l.padding_layers);
}

std::string VllmSection(const Plan& p) {
  const KvLayout& l = p.layout;
  const KvCapacity& c = p.capacity;
  std::string s = "vLLM's accounting\n";
  auto row = [&](const std::string& label, const std::string& value) {
    s += fmt::format("  {:<32}{}\n", label, value);
  };
  std::string block = fmt::format("{} tokens", l.attention_block_size);
  if (l.block_size_raised)
    block += fmt::format(" (raised to hold a {}-byte state page)", FormatCount(l.state_page_bytes));
  row("attention block size", block);
  std::string page = fmt::format("{} bytes per layer per block", FormatCount(l.page_bytes));
  if (l.state_padding_pct > 0) page += fmt::format(" (state page padded {:.2f}%)", l.state_padding_pct);
  row("page size", page);
  row("KV cache groups", GroupsText(l));
  row("blocks", FormatCount(c.num_blocks));
  row("blocks per max-length request", FormatCount(p.blocks_per_max_request));
  row("GPU KV cache size", fmt::format("{} tokens   (current vLLM: max concurrency x max model len)",
                                       FormatCount(c.tokens_concurrency)));
  row("", fmt::format("{} tokens   (earlier vLLM: blocks / groups x block size)", FormatCount(c.tokens_per_group)));
  for (const auto& line : l.log_lines) s += "  log: " + line + "\n";
  for (const auto& line : Split(KvCapacityLogLines(c, p.options.engine.scheduler.max_model_len), '\n')) {
    if (!line.empty()) s += "  log: " + line + "\n";
  }
  if (p.suggest_requested && p.suggest_full) {
    s += fmt::format(
        "  log: Replace gpu_memory_utilization config with `--kv-cache-memory={}` ({} GiB) to fit "
        "into requested memory, or `--kv-cache-memory={}` ({} GiB) to fully utilize gpu memory.\n",
        *p.suggest_requested, Gib(*p.suggest_requested), *p.suggest_full, Gib(*p.suggest_full));
  }
  return s + "\n";
}

std::string LengthsSection(const Plan& p) {
  if (!p.lengths) return "";
  const LengthPlan& lp = *p.lengths;
  const int pct = static_cast<int>(std::lround(p.options.confidence * 100));
  std::string s = fmt::format("Request lengths: {}\n", lp.description);
  auto row = [&](const std::string& label, const std::string& value) {
    s += fmt::format("  {:<32}{}\n", label, value);
  };
  row("mean length", fmt::format("{} tokens (p{}: {})", FormatCount(std::llround(lp.mean_length)), pct,
                                 FormatCount(lp.quantile_length)));
  row("blocks per request", fmt::format("{:.1f} mean, {:.1f} standard deviation", lp.mean_blocks, lp.sd_blocks));
  row("max concurrent requests", fmt::format("{:.1f}   (KV pool / mean request)", lp.max_concurrent_mean));
  row(fmt::format("conservative ({}%)", pct),
      fmt::format("{}   (total demand stays within the pool with {}% probability)", lp.conservative, pct));
  row("recommended max_num_seqs", FormatCount(lp.recommended_max_num_seqs));
  row("binding limit", lp.kv_binds ? fmt::format("KV cache: max_num_seqs {} would overfill the pool and preempt",
                                                 p.options.engine.scheduler.max_num_seqs)
                                   : fmt::format("max_num_seqs {}: the pool has room for more sequences",
                                                 p.options.engine.scheduler.max_num_seqs));
  return s + "\n";
}

json::object ActivationJson(const Plan& p) {
  return json::object{{"bytes", p.activation.bytes},
                      {"measured", p.activation.measured},
                      {"peak", p.activation_peak.empty() ? json::value(nullptr) : json::value(p.activation_peak)}};
}

json::object MemoryJson(const Plan& p) {
  auto item = [](const MemoryItem& m) { return json::object{{"bytes", m.bytes}, {"measured", m.measured}}; };
  return json::object{
      {"total", p.total},
      {"total_is_nominal", p.options.total_is_nominal},
      {"requested", p.requested},
      {"weights", item(p.weights)},
      {"activation", ActivationJson(p)},
      {"non_torch", item(p.non_torch)},
      {"cuda_graphs", item(p.cuda_graphs)},
      {"prefill_kv_copy", p.prefill_kv_copy},
      {"kv_pool", p.kv_pool},
      {"headroom", p.headroom},
      {"vllm_suggests_kv_cache_memory",
       p.suggest_full ? boost::json::value{{"requested", *p.suggest_requested}, {"full", *p.suggest_full}}
                      : boost::json::value(nullptr)}};
}

json::object VllmJson(const Plan& p) {
  json::array groups;
  for (const auto& g : p.layout.groups) {
    groups.push_back(json::object{{"type", g.spec.TypeName()},
                                  {"kind", LayerKindName(g.spec.kind)},
                                  {"layers", json::value_from(g.layers)},
                                  {"block_size", g.spec.group.block_size}});
  }
  return json::object{{"attention_block_size", p.layout.attention_block_size},
                      {"block_size_raised", p.layout.block_size_raised},
                      {"state_page_bytes", p.layout.state_page_bytes},
                      {"state_padding_pct", p.layout.state_padding_pct},
                      {"page_bytes", p.layout.page_bytes},
                      {"group_size", p.layout.group_size},
                      {"padding_layers", p.layout.padding_layers},
                      {"groups", groups},
                      {"num_blocks", p.capacity.num_blocks},
                      {"blocks_per_max_request", p.blocks_per_max_request},
                      {"kv_cache_tokens", p.capacity.tokens_concurrency},
                      {"kv_cache_tokens_per_group_definition", p.capacity.tokens_per_group},
                      {"max_concurrency", p.capacity.max_concurrency},
                      {"log_lines", json::value_from(p.layout.log_lines)}};
}

json::value LengthsJson(const Plan& p) {
  if (!p.lengths) return nullptr;
  const LengthPlan& l = *p.lengths;
  return json::object{{"description", l.description},
                      {"mean_length", l.mean_length},
                      {"quantile_length", l.quantile_length},
                      {"mean_blocks", l.mean_blocks},
                      {"sd_blocks", l.sd_blocks},
                      {"max_concurrent_mean", l.max_concurrent_mean},
                      {"conservative", l.conservative},
                      {"recommended_max_num_seqs", l.recommended_max_num_seqs},
                      {"binding", l.kv_binds ? "kv_cache" : "max_num_seqs"},
                      {"share_over_max_model_len", l.over_max_len_share}};
}

}  // namespace

std::string FormatPlanTable(const Plan& p) {
  std::string s = Header(p) + MemorySection(p) + KindsSection(p);
  if (p.kv_pool > 0) s += VllmSection(p);
  s += LengthsSection(p);
  if (!p.startup_error.empty()) {
    s += (p.options.mem_fraction_static ? "The engine would not start: " : "vLLM would not start: ") + p.startup_error +
         "\n\n";
  }
  if (!p.warnings.empty()) {
    s += "Warnings\n";
    for (const auto& w : p.warnings) s += "  - " + w + "\n";
  }
  return s;
}

json::value PlanToJson(const Plan& p) {
  const PlanOptions& o = p.options;
  json::array kinds;
  for (const auto& k : p.kinds) {
    kinds.push_back(json::object{{"kind", LayerKindName(k.kind)},
                                 {"layers", k.layers},
                                 {"bytes_per_token_per_layer", k.bytes_per_token},
                                 {"bytes_per_sequence_per_layer", k.bytes_per_sequence},
                                 {"bytes_one_max_length_sequence", k.bytes_max_len},
                                 {"share", k.share}});
  }
  json::object opts{{"gpu", o.gpu},
                    {"tensor_parallel_size", o.tensor_parallel},
                    {"weights", p.precision.name},
                    {"mxfp4_moe_backend", p.precision.expert_padding.backend},
                    {"unquantized", UnquantizedPartsName(p.precision.unquantized)},
                    {"kv_cache_dtype", DTypeName(p.kv_dtype)},
                    {"mamba_ssm_cache_dtype", DTypeName(p.ssm_dtype)},
                    {"gpu_memory_utilization", o.gpu_memory_utilization},
                    {"max_model_len", o.engine.scheduler.max_model_len},
                    {"max_num_batched_tokens", o.engine.scheduler.max_num_batched_tokens},
                    {"max_num_seqs", o.engine.scheduler.max_num_seqs},
                    {"confidence", o.confidence}};
  if (o.engine.cache.kv_cache_memory) opts["kv_cache_memory"] = *o.engine.cache.kv_cache_memory;
  if (o.mem_fraction_static) opts["mem_fraction_static"] = *o.mem_fraction_static;
  json::object params{{"total", p.params.total()}, {"active", p.params.active}, {"vision", p.params.vision}};
  return json::object{{"model", p.model.name},
                      {"model_type", p.model.model_type},
                      {"parameters", params},
                      {"options", opts},
                      {"memory", MemoryJson(p)},
                      {"layer_kinds", kinds},
                      {"vllm", VllmJson(p)},
                      {"lengths", LengthsJson(p)},
                      {"startup_error", p.startup_error.empty() ? json::value(nullptr) : json::value(p.startup_error)},
                      {"warnings", json::value_from(p.warnings)}};
}

std::string FormatPlanComparison(const Plan& a, const Plan& b, const std::string& change) {
  struct Row {
    std::string label;
    std::string (*value)(const Plan&);
  };
  static const Row rows[] = {
      {"weights GiB", [](const Plan& p) { return Gib(p.weights.bytes); }},
      {"KV pool GiB", [](const Plan& p) { return Gib(p.kv_pool); }},
      {"headroom GiB", [](const Plan& p) { return Gib(p.headroom); }},
      {"  one prefill's KV copy GiB", [](const Plan& p) { return Gib(p.prefill_kv_copy); }},
      {"  margin GiB", [](const Plan& p) { return Gib(p.Margin()); }},
      {"attention block size", [](const Plan& p) { return FormatCount(p.layout.attention_block_size); }},
      {"blocks", [](const Plan& p) { return FormatCount(p.capacity.num_blocks); }},
      {"GPU KV cache size (tokens)", [](const Plan& p) { return FormatCount(p.capacity.tokens_concurrency); }},
      {"max concurrency at max len", [](const Plan& p) { return fmt::format("{:.2f}x", p.capacity.max_concurrency); }},
      {"max concurrent (mean length)",
       [](const Plan& p) {
         return p.lengths ? fmt::format("{:.1f}", p.lengths->max_concurrent_mean) : std::string("-");
       }},
      {"recommended max_num_seqs",
       [](const Plan& p) { return p.lengths ? FormatCount(p.lengths->recommended_max_num_seqs) : std::string("-"); }},
      {"starts", [](const Plan& p) { return std::string(p.startup_error.empty() ? "yes" : "no"); }},
  };
  const size_t w = std::max<size_t>(16, change.size() + 2);
  std::string s = fmt::format("Comparison: {}\n  {:<30}{:>16}{:>{}}\n", change, "", "as given", change, w);
  for (const auto& r : rows) s += fmt::format("  {:<30}{:>16}{:>{}}\n", r.label, r.value(a), r.value(b), w);
  if (a.capacity.max_concurrency > 0) {
    s += fmt::format("  capacity ratio {:.2f}x\n", b.capacity.max_concurrency / a.capacity.max_concurrency);
  }
  if (a.kv_dtype != b.kv_dtype) {
    s += "  note: a different KV format also changes the block size (hybrid models) and, with the query\n"
         "  unquantized, a prefill's copy of its pages; measure again before pinning --kv-cache-memory from the\n"
         "  other run.\n";
  }
  return s;
}

}  // namespace goodput
