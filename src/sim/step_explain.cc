#include "sim/step_explain.h"

#include <algorithm>
#include <utility>

#include <boost/json.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/text.h"
#include "core/units.h"

namespace goodput {

namespace {

constexpr int64_t kMaxRequests = int64_t{1} << 20;
constexpr int64_t kMaxTokens = int64_t{1} << 28;

Result<int64_t> ParseCount(std::string_view text, bool zero_allowed) {
  if (zero_allowed && text == "0") return 0;
  return ParseTokenCount(text);
}

Result<StepGroup> ParseGroup(std::string_view text) {
  const auto bad = [&](const std::string& why) {
    return Status::InvalidArgument(fmt::format(
        "'{}': {} (want N@CONTEXT for N decodes, or N@CONTEXT+NEW for N requests computing NEW tokens)", text, why));
  };
  const size_t at = text.find('@');
  if (at == std::string_view::npos) return bad("no '@'");
  const size_t plus = text.find('+', at);
  StepGroup g;
  auto n = ParseCount(text.substr(0, at), false);
  if (!n.ok()) return bad("N: " + n.status().message());
  auto context = ParseCount(text.substr(at + 1, plus == std::string_view::npos ? plus : plus - at - 1), true);
  if (!context.ok()) return bad("CONTEXT: " + context.status().message());
  g.requests = *n, g.context = *context;
  if (plus != std::string_view::npos) {
    auto fresh = ParseCount(text.substr(plus + 1), false);
    if (!fresh.ok()) return bad("NEW: " + fresh.status().message());
    g.new_tokens = *fresh, g.decode = false;
  }
  if (g.requests > kMaxRequests) return bad(fmt::format("more than {} requests", kMaxRequests));
  if (g.context > kMaxTokens || g.new_tokens > kMaxTokens - g.context) {
    return bad(fmt::format("more than {} tokens a request", kMaxTokens));
  }
  return g;
}

// The tokens each request of `g` computes: a decode its sampled token and the step's drafts.
int64_t TokensComputed(const StepGroup& g, int32_t drafts) { return g.decode ? 1 + drafts : g.new_tokens; }

std::string Describe(const StepGroup& g, int32_t drafts) {
  if (!g.decode) {
    return fmt::format("{} x {} new tokens after {}", FormatCount(g.requests), FormatCount(g.new_tokens),
                       FormatCount(g.context));
  }
  return fmt::format("{} decode{} at {} tokens of context{}", FormatCount(g.requests), g.requests == 1 ? "" : "s",
                     FormatCount(g.context), drafts > 0 ? fmt::format(" ({} drafts each)", drafts) : "");
}

// The part the step waits on longest: what to change first. Under async
// scheduling a host shorter than the GPU's work hides behind it.
std::pair<const char*, double> Bound(const CostModel::StepCost& c, bool async) {
  const double host = async && c.host < c.gpu ? 0 : c.host;
  const std::pair<const char*, double> parts[] = {
      {c.matmul >= c.weights ? "matmul compute" : "weight reads", c.matmul_phase},
      {c.attention >= c.kv ? "attention compute" : "KV cache reads", c.attention_phase},
      {"norms and activations", c.elementwise},
      {"communication", c.communication},
      {"drafting", c.drafting},
      {"kernel latencies", c.kernels},
      {"eager kernel launches", c.launches >= c.gpu ? c.launches : 0},  // only where they hold the GPU up
      {"host", host}};
  return *std::max_element(std::begin(parts), std::end(parts),
                           [](const auto& a, const auto& b) { return a.second < b.second; });
}

}  // namespace

Result<std::vector<StepGroup>> ParseStepBatch(std::string_view text) {
  std::vector<StepGroup> groups;
  int64_t requests = 0;
  for (const std::string& item : Split(text, ',')) {
    auto g = ParseGroup(Trim(item));
    if (!g.ok()) return g.status().WithContext("--explain-step");
    requests += g->requests;
    if (requests > kMaxRequests) {
      return Status::InvalidArgument(fmt::format("--explain-step: more than {} requests in all", kMaxRequests));
    }
    groups.push_back(*g);
  }
  if (groups.empty()) return Status::InvalidArgument("--explain-step: no requests given");
  return groups;
}

StepExplanation ExplainStep(const CostModel& model, std::vector<StepGroup> groups, int32_t drafts) {
  StepExplanation e;
  e.groups = std::move(groups);
  e.drafts = drafts;
  for (const StepGroup& g : e.groups) {
    const int32_t d = g.decode ? drafts : 0;
    const int64_t fresh = TokensComputed(g, drafts);
    for (int64_t i = 0; i < g.requests; ++i) model.Add(e.step, g.context, fresh, /*samples=*/true, d);
  }
  e.cost = model.Explain(e.step);
  e.factors = model.factors();
  e.data_parallel = model.model().data_parallel;
  return e;
}

std::string FormatStepExplanation(const StepExplanation& e) {
  const CostFactors& f = e.factors;
  std::vector<std::string> what;
  for (const StepGroup& g : e.groups) what.push_back(Describe(g, e.drafts));
  const CostModel::StepCost& c = e.cost;
  const auto ms = [](double s) { return fmt::format("{:10.3f}", s * 1e3); };
  const auto requests = static_cast<int64_t>(e.step.requests);
  std::string out =
      fmt::format("one step: {}; {} request{}, {} tokens\n", fmt::join(what, " + "), FormatCount(requests),
                  requests == 1 ? "" : "s", FormatCount(static_cast<int64_t>(e.step.tokens)));
  out += fmt::format("{:<22}{:>10}\n", "part", "ms");
  out += fmt::format("{:<22}{}\n{:<22}{}\n", "matmuls (compute)", ms(c.matmul), "weights (memory)", ms(c.weights));
  out += fmt::format("{:<22}{}  roofline, overlap {:g}\n", "  matmul phase", ms(c.matmul_phase), f.overlap);
  out += fmt::format("{:<22}{}\n{:<22}{}\n", "attention (compute)", ms(c.attention), "KV cache (memory)", ms(c.kv));
  out += fmt::format("{:<22}{}\n", "  attention phase", ms(c.attention_phase));
  out += fmt::format("{:<22}{}  norms, FFN activation: 16-bit passes over the step's activations\n",
                     "elementwise (memory)", ms(c.elementwise));
  out += fmt::format("{:<22}{}", "communication", ms(c.communication));
  if (c.communication > 0) out += fmt::format("  {:g} us a collective beyond its bytes", f.link_latency_s * 1e6);
  out += fmt::format("\n{:<22}{}\n", "drafting", ms(c.drafting));
  out += fmt::format("{:<22}{}  {:g} us a kernel\n", "kernel latencies", ms(c.kernels), f.kernel_latency_s * 1e6);
  if (c.launches > 0) {
    const std::string why = e.step.prompts > 0 ? "a prompt step runs without CUDA graphs"
                                               : fmt::format(
                                                     "a decode step of more than {} requests{} runs without "
                                                     "CUDA graphs",
                                                     f.graph_max_batch, e.data_parallel > 1 ? " a replica" : "");
    out += fmt::format("{:<22}{}  {:g} us a kernel: {}; the GPU waits on them where longer\n", "eager launches",
                       ms(c.launches), f.eager_kernel_s * 1e6, why);
  }
  out += fmt::format("{:<22}{}\n", "GPU", ms(c.gpu));
  // Each replica's host prepares its share of the requests (CostModel::Explain).
  const std::string share = e.data_parallel > 1 ? fmt::format(", each of {} replicas its share", e.data_parallel) : "";
  out += fmt::format("{:<22}{}  {:g} ms + {:g} us a request{}\n", "host", ms(c.host), f.step_overhead_s * 1e3,
                     f.per_sequence_s * 1e6, share);
  out += fmt::format("{:<22}{}  {}\n", "step", ms(c.total),
                     f.async_scheduling ? "the longer of host and GPU (async scheduling)" : "host + GPU");
  const auto [bound, seconds] = Bound(c, f.async_scheduling);
  out += fmt::format("bound by: {} ({:.0f}% of the step)\n", bound, c.total > 0 ? 100 * seconds / c.total : 0.0);
  if (c.total > 0) {
    out += fmt::format("{:.1f} steps/s, one token a sampling request: {} tokens/s{}\n", 1 / c.total,
                       FormatCount(static_cast<int64_t>(e.step.samples / c.total)),
                       e.drafts > 0 ? " (and the drafts each step accepts)" : "");
  }
  return out;
}

boost::json::object StepExplanationToJson(const StepExplanation& e) {
  const CostFactors& f = e.factors;
  boost::json::array groups;
  for (const StepGroup& g : e.groups) {
    groups.push_back(boost::json::object{{"requests", g.requests},
                                         {"context", g.context},
                                         {"new_tokens", TokensComputed(g, e.drafts)},
                                         {"decode", g.decode}});
  }
  const CostModel::StepCost& c = e.cost;
  return boost::json::object{{"groups", std::move(groups)},
                             {"drafts", e.drafts},
                             {"requests", static_cast<int64_t>(e.step.requests)},
                             {"tokens", static_cast<int64_t>(e.step.tokens)},
                             {"seconds", boost::json::object{{"matmul", c.matmul},
                                                             {"weights", c.weights},
                                                             {"matmul_phase", c.matmul_phase},
                                                             {"attention", c.attention},
                                                             {"kv", c.kv},
                                                             {"attention_phase", c.attention_phase},
                                                             {"elementwise", c.elementwise},
                                                             {"communication", c.communication},
                                                             {"drafting", c.drafting},
                                                             {"kernels", c.kernels},
                                                             {"eager_launches", c.launches},
                                                             {"gpu", c.gpu},
                                                             {"host", c.host},
                                                             {"step", c.total}}},
                             {"async_scheduling", f.async_scheduling},
                             {"bound", Bound(c, f.async_scheduling).first}};
}

}  // namespace goodput
