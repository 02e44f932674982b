#include "hw/engine_host.h"

#include <algorithm>

#include <fmt/format.h>

#include <boost/json.hpp>
#include <set>

#include "core/data_dir.h"
#include "core/json_file.h"

namespace goodput {
namespace {

namespace json = boost::json;

Result<double> Seconds(const json::object& o, const char* key, const std::string& where) {
  const json::value* v = o.if_contains(key);
  if (!v || !v->is_number() || !(v->to_number<double>() >= 0)) {
    return Status::InvalidArgument(fmt::format("{}: \"{}\" must be a number of seconds >= 0", where, key));
  }
  return v->to_number<double>();
}

// `key`: [{"below_gib": 35, "<value>": N}, ..., {"<value>": N}], bounds rising and the last without
// one; with `tp4`, each step may also give "<value>_tp4".
Result<std::vector<EngineHost::MemoryStep>> ParseByMemory(const json::object& o, const char* key, const char* value,
                                                          bool tp4, const std::string& where) {
  std::vector<EngineHost::MemoryStep> steps;
  const json::value* v = o.if_contains(key);
  if (!v) return steps;
  const std::string tp4_key = std::string(value) + "_tp4";
  const std::string error =
      fmt::format("{}: \"{}\" must list {{\"below_gib\": GiB, \"{}\": N{}}} with rising bounds, the last without one",
                  where, key, value, tp4 ? fmt::format(", optionally \"{}\": N", tp4_key) : "");
  if (!v->is_array() || v->as_array().empty()) return Status::InvalidArgument(error);
  const auto positive = [](const json::value* n) { return n && n->is_int64() && n->as_int64() > 0; };
  for (const json::value& s : v->as_array()) {
    const json::object* step = s.is_object() ? &s.as_object() : nullptr;
    const json::value* n = step ? step->if_contains(value) : nullptr;
    const json::value* n4 = step && tp4 ? step->if_contains(tp4_key) : nullptr;
    const json::value* below = step ? step->if_contains("below_gib") : nullptr;
    if (!positive(n) || (n4 && !positive(n4)) || (step && !tp4 && step->contains(tp4_key)))
      return Status::InvalidArgument(error);
    const double bound = below && below->is_number() ? below->to_number<double>() : 0;
    const bool last = &s == &v->as_array().back();
    if ((below != nullptr) == last || (below && !(bound > (steps.empty() ? 0 : steps.back().below_gib))))
      return Status::InvalidArgument(error);
    steps.push_back({bound, n->as_int64(), n4 ? n4->as_int64() : 0});
  }
  return steps;
}

// The step of `steps` for a card of `total_memory_bytes`; nullptr where the table is empty.
const EngineHost::MemoryStep* StepFor(const std::vector<EngineHost::MemoryStep>& steps, int64_t total_memory_bytes) {
  const double gib = static_cast<double>(total_memory_bytes) / (int64_t{1} << 30);
  for (const EngineHost::MemoryStep& s : steps) {
    if (s.below_gib > 0 && gib >= s.below_gib) continue;
    return &s;
  }
  return nullptr;
}

// "fused_allreduce": {"latency_s": S, "architectures": [...], "cards": [...], "min_hidden_size": N}.
Result<std::optional<EngineHost::FusedAllReduce>> ParseFusedAllReduce(const json::object& o, const std::string& where) {
  const json::value* v = o.if_contains("fused_allreduce");
  if (!v) return std::optional<EngineHost::FusedAllReduce>();
  const std::string error = where +
                            ": \"fused_allreduce\" must give \"latency_s\" (seconds >= 0), \"architectures\" and "
                            "\"cards\" (lists of names) and optionally \"min_hidden_size\" (an integer >= 0)";
  if (!v->is_object()) return Status::InvalidArgument(error);
  const json::object& f = v->as_object();
  EngineHost::FusedAllReduce out;
  const json::value* latency = f.if_contains("latency_s");
  if (!latency || !latency->is_number() || !(latency->to_number<double>() >= 0)) return Status::InvalidArgument(error);
  out.latency_s = latency->to_number<double>();
  for (auto [key, list] : {std::pair{"architectures", &out.architectures}, std::pair{"cards", &out.cards}}) {
    const json::value* a = f.if_contains(key);
    if (!a || !a->is_array() || a->as_array().empty()) return Status::InvalidArgument(error);
    for (const json::value& name : a->as_array()) {
      if (!name.is_string()) return Status::InvalidArgument(error);
      list->emplace_back(name.as_string());
    }
  }
  if (const json::value* h = f.if_contains("min_hidden_size")) {
    if (!h->is_int64() || h->as_int64() < 0) return Status::InvalidArgument(error);
    out.min_hidden_size = h->as_int64();
  }
  return std::optional<EngineHost::FusedAllReduce>(std::move(out));
}

Result<EngineHost> ParseEngineHost(const json::value& v, const std::string& path) {
  if (!v.is_object() || !v.as_object().contains("name") || !v.at("name").is_string()) {
    return Status::InvalidArgument(path + ": every engine needs a \"name\"");
  }
  const json::object& o = v.as_object();
  EngineHost e;
  e.name = std::string(o.at("name").as_string());
  const std::string where = path + ": engine " + e.name;
  GOODPUT_ASSIGN_OR_RETURN(e.step_overhead_s, Seconds(o, "step_overhead_s", where));
  GOODPUT_ASSIGN_OR_RETURN(e.per_sequence_s, Seconds(o, "per_sequence_s", where));
  GOODPUT_ASSIGN_OR_RETURN(e.frontend_latency_s, Seconds(o, "frontend_latency_s", where));
  if (o.contains("eager_prompt_kernel_s")) {  // absent: prompt steps replay CUDA graphs
    GOODPUT_ASSIGN_OR_RETURN(e.eager_prompt_kernel_s, Seconds(o, "eager_prompt_kernel_s", where));
  }
  for (auto [key, field] :
       {std::pair{"async_scheduling", &e.async_scheduling}, std::pair{"guaranteed_no_evict", &e.guaranteed_no_evict},
        std::pair{"chunked_prefill", &e.chunked_prefill}, std::pair{"prefill_first", &e.prefill_first},
        std::pair{"token_budget_split_over_dp", &e.token_budget_split_over_dp}}) {
    const json::value* a = o.if_contains(key);
    if (!a) continue;
    if (!a->is_bool()) return Status::InvalidArgument(fmt::format("{}: \"{}\" must be true or false", where, key));
    *field = a->as_bool();
  }
  GOODPUT_ASSIGN_OR_RETURN(e.token_budget_by_memory,
                           ParseByMemory(o, "token_budget_by_memory", "tokens", false, where));
  GOODPUT_ASSIGN_OR_RETURN(e.graph_max_batch_by_memory,
                           ParseByMemory(o, "graph_max_batch_by_memory", "batch", true, where));
  GOODPUT_ASSIGN_OR_RETURN(e.fused_allreduce, ParseFusedAllReduce(o, where));
  if (const json::value* s = o.if_contains("source"); s && s->is_string()) e.source = std::string(s->as_string());
  return e;
}

}  // namespace

Result<std::vector<EngineHost>> LoadEngineHosts() {
  const std::string path = DataDir() + "/hardware/engines.json";
  GOODPUT_ASSIGN_OR_RETURN(json::value doc, ReadJsonFile(path, "engines catalog"));
  if (!doc.is_object() || !doc.as_object().contains("engines") || !doc.at("engines").is_array()) {
    return Status::InvalidArgument(path + ": expected an object with an \"engines\" list");
  }
  std::vector<EngineHost> out;
  std::set<std::string> seen;
  for (const auto& v : doc.at("engines").as_array()) {
    GOODPUT_ASSIGN_OR_RETURN(EngineHost e, ParseEngineHost(v, path));
    if (!seen.insert(e.name).second) return Status::InvalidArgument(path + ": engine " + e.name + " given twice");
    out.push_back(std::move(e));
  }
  return out;
}

Result<EngineHost> FindEngineHost(const std::string& name) {
  GOODPUT_ASSIGN_OR_RETURN(std::vector<EngineHost> all, LoadEngineHosts());
  std::vector<std::string> known;
  for (const auto& e : all) {
    if (e.name == name) return e;
    known.push_back(e.name);
  }
  return Status::NotFound(fmt::format("unknown engine '{}'. Known engines: {}", name, fmt::join(known, ", ")));
}

std::optional<int64_t> EngineHost::DefaultTokenBudget(int64_t total_memory_bytes, int dp) const {
  const MemoryStep* s = StepFor(token_budget_by_memory, total_memory_bytes);
  if (!s) return std::nullopt;
  return token_budget_split_over_dp ? std::max<int64_t>(1, s->value / std::max(dp, 1)) : s->value;
}

std::optional<int64_t> EngineHost::DefaultGraphMaxBatch(int64_t total_memory_bytes, int gpus) const {
  const MemoryStep* s = StepFor(graph_max_batch_by_memory, total_memory_bytes);
  if (!s) return std::nullopt;
  return gpus >= 4 && s->value_tp4 > 0 ? s->value_tp4 : s->value;
}

std::optional<double> EngineHost::FusedAllReduceLatency(const std::string& architecture, int64_t hidden_size,
                                                        const std::string& card_arch, int tensor_parallel,
                                                        int data_parallel) const {
  if (!fused_allreduce || tensor_parallel <= 1 || data_parallel > 1) return std::nullopt;
  const FusedAllReduce& f = *fused_allreduce;
  const auto listed = [](const std::vector<std::string>& names, const std::string& name) {
    return std::find(names.begin(), names.end(), name) != names.end();
  };
  if (!listed(f.architectures, architecture) || !listed(f.cards, card_arch) || hidden_size <= f.min_hidden_size)
    return std::nullopt;
  return f.latency_s;
}

CostFactors WithEngineHost(CostFactors f, const EngineHost& e) {
  f.step_overhead_s = e.step_overhead_s;
  f.per_sequence_s = e.per_sequence_s;
  f.frontend_latency_s = e.frontend_latency_s;
  f.async_scheduling = e.async_scheduling;
  f.eager_kernel_s = e.eager_prompt_kernel_s;
  return f;
}

}  // namespace goodput
