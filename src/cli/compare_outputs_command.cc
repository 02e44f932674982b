#include "cli/compare_outputs_command.h"

#include <iostream>
#include <memory>

#include <boost/json.hpp>
#include <fmt/format.h>

#include "cli/measurement_flags.h"
#include "cli/target_flags.h"
#include "client/answers.h"

namespace goodput {
namespace {

struct CompareArgs {
  std::vector<std::string> targets, models, engine_args, launches;
  TargetArgs common;  // api key, chat, timeouts (its target/model/engine args come per side)
  std::string workload;
  int workload_prompts = 3, max_tokens = 32;
  uint64_t seed = 1234;
  OutputThresholds thresholds;
  bool json = false;
};

constexpr const char* kFooter = R"(The source document's check after a change that can alter answers (the KV cache
format, the weights' format, speculative decoding): the same questions, asked of the
engine before and after. Each prompt is asked greedily (temperature 0, a fixed seed)
for --max-tokens tokens with the chosen tokens' log-probabilities. Two answers agree up
to their first differing token; after it they answer different texts, so agreement
counts the tokens before it. Outputs differ when the agreeing share of all tokens is
below --min-token-agreement or the mean |difference of log-probabilities| over the
agreeing tokens is above --max-logprob-delta. A server without log-probabilities is
compared by character. Exit status: 0 when the outputs agree, 1 when they differ.
Examples:
  goodput compare-outputs --target embedded --model goodput-small \
      --engine-args '--kv-cache-dtype fp32' --engine-args '--kv-cache-dtype int8'
  goodput compare-outputs --target http://127.0.0.1:8000 --target http://127.0.0.1:8001 --model M
)";

void AddFlags(CLI::App& c, CompareArgs& a) {
  c.add_option("--target,-t", a.targets, "The two engines: URL or embedded (once: both sides the same kind)")
      ->required();
  c.add_option("--model,-m", a.models, "Served name (URL) or preset (embedded); once for both, or once per target");
  c.add_option("--engine-args", a.engine_args, "Engine flags per side (given twice: the first, then the second)");
  c.add_option("--launch", a.launches, "URL targets: the command that starts each server (once per target)");
  c.add_option("--api-key", a.common.api_key, "Bearer token for the targets");
  c.add_flag("--chat", a.common.chat, "Ask through /chat/completions instead of /completions");
  c.add_flag("--insecure", a.common.insecure, "https: accept any server certificate");
  c.add_option("--timeout", a.common.timeout, "Seconds an answer may take")->capture_default_str();
  c.add_option("--launch-timeout", a.common.launch_timeout, "Seconds to wait for a launched server")
      ->capture_default_str();
  c.add_option("--workload,-w", a.workload,
               "Also ask the workload's first requests (default: the five fixed questions only)");
  c.add_option("--workload-prompts", a.workload_prompts, "How many of the workload's requests")->capture_default_str();
  c.add_option("--max-tokens", a.max_tokens, "Tokens per answer")->capture_default_str();
  c.add_option("--seed", a.seed, "The requests' seed")->capture_default_str();
  c.add_option("--min-token-agreement", a.thresholds.min_token_agreement,
               "Outputs differ below this share of agreeing tokens")
      ->capture_default_str();
  c.add_option("--max-logprob-delta", a.thresholds.max_mean_abs_logprob_delta,
               "Outputs differ above this mean |d log p| (nats) over the agreeing tokens")
      ->capture_default_str();
  c.add_flag("--json", a.json, "Print JSON instead of a table");
  c.footer(kFooter);
}

// The i-th of a per-side list: its only value for both sides, else its own.
std::string Side(const std::vector<std::string>& list, size_t i) {
  if (list.empty()) return "";
  return list.size() == 1 ? list[0] : list[i];
}

Result<std::array<TargetArgs, 2>> Sides(const CompareArgs& a) {
  for (const auto* list : {&a.targets, &a.models, &a.engine_args, &a.launches}) {
    if (list->size() > 2)
      return Status::InvalidArgument("compare-outputs compares two engines: each flag at most twice");
  }
  if (a.targets.size() < 2 && a.engine_args.size() < 2 && a.launches.size() < 2) {
    return Status::InvalidArgument(
        "compare-outputs compares two engines: give --target twice, or --engine-args twice "
        "for one kind of target");
  }
  std::array<TargetArgs, 2> sides;
  for (size_t i = 0; i < 2; ++i) {
    sides[i] = a.common;
    sides[i].target = Side(a.targets, i);
    sides[i].model = Side(a.models, i);
    sides[i].engine_args = Side(a.engine_args, i);
    sides[i].launch = Side(a.launches, i);
    if (KindOf(sides[i]) == TargetKind::kSim) {
      return Status::InvalidArgument("compare-outputs asks a real engine: the simulator has no outputs");
    }
    GOODPUT_RETURN_IF_ERROR(CheckTargetFlags(sides[i], false).WithContext(fmt::format("target {}", i + 1)));
  }
  if (!(a.thresholds.min_token_agreement >= 0 && a.thresholds.min_token_agreement <= 1)) {
    return Status::InvalidArgument("--min-token-agreement must be in [0, 1]");
  }
  if (a.max_tokens < 1 || a.max_tokens > 4096) return Status::InvalidArgument("--max-tokens must be 1..4096");
  return sides;
}

// One side's answers: its server started (or reached), asked, stopped.
Result<std::vector<Answer>> Ask(const TargetArgs& side, const CompareArgs& a,
                                const std::vector<client::AnswerPrompt>& p, std::string& describe) {
  GOODPUT_ASSIGN_OR_RETURN(std::unique_ptr<Target> t, MakeTarget(side, Setting{}));
  describe = t->Describe();
  GOODPUT_ASSIGN_OR_RETURN(client::Endpoint e, client::ParseEndpoint(t->ServedUrl()));
  e.api_key = side.api_key;
  client::AnswerOptions o;
  o.endpoint = e;
  o.model = side.model.empty() ? "goodput-small" : side.model;
  o.chat = side.chat;
  o.max_tokens = a.max_tokens;
  o.seed = a.seed;
  o.timeout_s = side.timeout;
  o.insecure_tls = side.insecure;
  return client::CollectAnswers(o, p);
}

std::string Table(const OutputComparison& c) {
  std::string s = fmt::format("  {:<22}{:>8}{:>10}{:>18}{:>16}\n", "prompt", "tokens", "agreeing", "first divergence",
                              "mean |d log p|");
  for (const AnswerDiff& d : c.answers) {
    s += fmt::format("  {:<22}{:>8}{:>10}{:>18}{:>16}\n", d.prompt_label, d.tokens, d.agreeing,
                     d.first_divergence ? std::to_string(*d.first_divergence) : "-",
                     d.mean_abs_logprob_delta ? fmt::format("{:.4f}", *d.mean_abs_logprob_delta) : "-");
  }
  return s;
}

void Run(const CompareArgs& a) {
  const auto fail = [](const Status& st) { throw CLI::RuntimeError("goodput compare-outputs: " + st.message(), 2); };
  auto sides = Sides(a);
  if (!sides.ok()) fail(sides.status());
  std::vector<client::AnswerPrompt> prompts = client::FixedQuestions();
  if (!a.workload.empty()) {
    auto w = LoadWorkload(a.workload);
    if (!w.ok()) fail(w.status().WithContext("--workload"));
    for (auto& p : client::WorkloadPrompts(*w, a.workload_prompts)) prompts.push_back(std::move(p));
  }
  std::array<std::vector<Answer>, 2> answers;
  std::array<std::string, 2> names;
  for (size_t i = 0; i < 2; ++i) {
    Progress(fmt::format("compare-outputs: asking target {} ({} prompts)", i + 1, prompts.size()));
    auto got = Ask((*sides)[i], a, prompts, names[i]);
    if (!got.ok()) fail(got.status().WithContext(fmt::format("target {}", i + 1)));
    answers[i] = std::move(*got);
  }
  Progress("");
  const OutputComparison c = CompareAnswers(answers[0], answers[1], a.thresholds);
  if (a.json) {
    std::cout << boost::json::serialize(boost::json::object{
                     {"targets", boost::json::array{boost::json::value(names[0]), boost::json::value(names[1])}},
                     {"comparison", OutputComparisonToJson(c)}})
              << "\n";
  } else {
    std::cout << fmt::format(
                     "target 1: {}\ntarget 2: {}\n{} prompts, greedy (temperature 0, seed {}), {} tokens each\n",
                     names[0], names[1], prompts.size(), a.seed, a.max_tokens)
              << Table(c)
              << fmt::format("verdict: {} (thresholds: token agreement >= {:.0f}%, mean |d log p| <= {:g})\n",
                             c.Summary(), 100 * a.thresholds.min_token_agreement,
                             a.thresholds.max_mean_abs_logprob_delta);
  }
  if (c.differ) throw CLI::RuntimeError("", 1);
}

}  // namespace

void AddCompareOutputsCommand(CLI::App& app) {
  auto args = std::make_shared<CompareArgs>();
  CLI::App* c = app.add_subcommand(
      "compare-outputs", "Ask two engines the same prompts greedily and compare their answers token by token");
  AddFlags(*c, *args);
  c->callback([args]() { Run(*args); });
}

}  // namespace goodput
