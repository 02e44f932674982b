#include "cli/sim_command.h"

#include <unistd.h>

#include <algorithm>
#include <iostream>
#include <memory>

#include <boost/json.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli/deployment_flags.h"
#include "cli/load_flags.h"
#include "model/catalog.h"
#include "sim/setup.h"
#include "sim/sim_report.h"
#include "workload/workload.h"

namespace goodput {
namespace {

struct SimArgs {
  DeploymentArgs d;
  std::string workload, slo, concurrency, rate, policy = "fcfs";
  double burstiness = 1;
  int repeat = 3;
  int64_t requests = 0, long_prefill_token_threshold = 0, max_offline_seqs = 0;
  int num_speculative_tokens = 0;
  double acceptance_rate = 0.7;
  std::optional<double> compute_efficiency, bandwidth_efficiency, step_overhead;
  std::vector<std::string> sweep;
  double max_load = 0;
  bool json = false;
  bool capacity = false;  // set by the `capacity` subcommand
};

constexpr const char* kFooter = R"(Definitions (DESIGN.md §1):
  TTFT = first token - arrival; TPOT = (last - first) / (output tokens - 1), only for
  2+ tokens; per-request speed = 1 / median TPOT. A request is good when it meets every
  target of its class; failed requests count against attainment. A class holds its SLO
  when attainment >= its highest percentile (p99 -> 99%). Goodput = good requests / s.
  Capacity = the last load before some class stops holding its SLO.
Each point runs the workload --repeat times with different seeds; figures are medians,
spread = (max - min) / median of the throughput. Warm-up and cool-down requests (the
workload's warmup/cooldown) are not measured.
Step time = overhead + max(FLOPs / (peak x compute efficiency), bytes / (bandwidth x
bandwidth efficiency)); factors come from the GPU's catalog entry unless overridden.
)";

void AddSimFlags(CLI::App& c, SimArgs& a) {
  AddDeploymentFlags(c, a.d);
  c.add_option("--workload,-w", a.workload, "Workload file (YAML/JSON), e.g. data/workloads/chat.yaml");
  c.add_option("--slo", a.slo, "SLO per class, e.g. 'interactive: ttft p99 <= 1s, tpot p99 <= 100ms'");
  c.add_option("--concurrency,-c", a.concurrency, "Closed-loop loads to run, e.g. 1,8,32,128,256");
  c.add_option("--rate,-r", a.rate, "Open-loop request rates to run (requests/s), e.g. 1,2,4");
  c.add_option("--burstiness", a.burstiness, "With --rate: gamma shape (1 = Poisson, < 1 burstier)")->capture_default_str();
  c.add_option("--repeat", a.repeat, "Runs per load (different seeds); figures are medians")->capture_default_str();
  c.add_option("--requests", a.requests, "Requests per run (default: the workload's)");
  c.add_option("--scheduling-policy", a.policy, "fcfs | priority | slo")->capture_default_str();
  c.add_option("--long-prefill-token-threshold", a.long_prefill_token_threshold, "Max prefill chunk per request (0: budget)");
  c.add_option("--max-offline-seqs", a.max_offline_seqs, "Cap on running offline requests (0: none)");
  c.add_option("--num-speculative-tokens", a.num_speculative_tokens, "Draft tokens per step (speculative decoding)");
  c.add_option("--acceptance-rate", a.acceptance_rate, "Chance each draft is accepted")->capture_default_str();
  c.add_option("--compute-efficiency", a.compute_efficiency, "Override the GPU entry's matmul efficiency");
  c.add_option("--bandwidth-efficiency", a.bandwidth_efficiency, "Override the GPU entry's bandwidth efficiency");
  c.add_option("--step-overhead", a.step_overhead, "Override the per-step overhead (seconds)");
  c.add_option("--sweep", a.sweep, "Vary one engine setting, e.g. max-num-seqs=8,16,32; settings ranked by goodput");
  c.add_option("--max-load", a.max_load, "capacity: highest load to try (default 4096 clients or 1000 req/s)");
  c.add_flag("--json", a.json, "Print JSON instead of tables");
}

struct Prepared {
  Workload workload;
  HardwareSpec hw;
  SimSetup setup;
  std::vector<ArrivalSpec> ladder;
};

Status ApplyOverrides(const SimArgs& a, SimSetup& s) {
  if (!a.compute_efficiency && !a.bandwidth_efficiency && !a.step_overhead) return Status::Ok();
  CostFactors f = s.cost->factors();
  f.compute_efficiency = a.compute_efficiency.value_or(f.compute_efficiency);
  f.bandwidth_efficiency = a.bandwidth_efficiency.value_or(f.bandwidth_efficiency);
  f.step_overhead_s = a.step_overhead.value_or(f.step_overhead_s);
  if (!(f.compute_efficiency > 0 && f.compute_efficiency <= 1) || !(f.bandwidth_efficiency > 0 && f.bandwidth_efficiency <= 1) ||
      f.step_overhead_s < 0) {
    return Status::InvalidArgument("efficiencies must be in (0, 1] and --step-overhead >= 0");
  }
  s.cost = std::make_unique<CostModel>(s.cost->model(), f);
  return Status::Ok();
}

Result<SchedulerConfig> SchedulerFlags(const SimArgs& a) {
  SchedulerConfig c;
  GOODPUT_ASSIGN_OR_RETURN(c.policy, ParseSchedulingPolicy(a.policy));
  if (a.long_prefill_token_threshold < 0 || a.max_offline_seqs < 0 || a.num_speculative_tokens < 0) {
    return Status::InvalidArgument("thresholds, caps and draft lengths must be >= 0");
  }
  if (!(a.acceptance_rate >= 0 && a.acceptance_rate <= 1)) return Status::InvalidArgument("--acceptance-rate must be in [0, 1]");
  c.long_prefill_token_threshold = a.long_prefill_token_threshold;
  c.max_offline_seqs = a.max_offline_seqs;
  c.num_speculative_tokens = a.num_speculative_tokens;
  return c;
}

// The deployment, KV pool and cost model the flags describe.
Result<SimSetup> BuildSetup(const SimArgs& a, const HardwareSpec& hw) {
  GOODPUT_ASSIGN_OR_RETURN(ModelSpec model, LoadModel(a.d.model));
  if (hw.memory_bandwidth <= 0) return Status::InvalidArgument("the simulator needs a --gpu from the catalog");
  GOODPUT_ASSIGN_OR_RETURN(PlanOptions po, ToPlanOptions(a.d));
  GOODPUT_ASSIGN_OR_RETURN(SchedulerConfig sc, SchedulerFlags(a));
  GOODPUT_ASSIGN_OR_RETURN(SimSetup setup, SetupSimulation(model, po, hw, sc));
  setup.options.acceptance_rate = a.acceptance_rate;
  GOODPUT_RETURN_IF_ERROR(ApplyOverrides(a, setup));
  return setup;
}

Result<Prepared> Prepare(const SimArgs& a) {
  if (a.workload.empty()) return Status::InvalidArgument("--workload is required (see data/workloads/)");
  if (a.d.model.empty()) return Status::InvalidArgument("--model is required (see goodput plan --list-models)");
  if (a.repeat < 1) return Status::InvalidArgument("--repeat must be at least 1");
  Prepared p;
  GOODPUT_ASSIGN_OR_RETURN(p.workload, LoadWorkload(a.workload));
  if (!a.slo.empty()) {
    auto slo = ParseSlo(a.slo);
    if (!slo.ok()) return slo.status().WithContext("--slo");
    GOODPUT_RETURN_IF_ERROR(ApplySlo(p.workload, *slo).WithContext("--slo"));
  }
  if (a.requests < 0) return Status::InvalidArgument("--requests must be positive");
  if (a.requests > 0) p.workload.requests = a.requests;
  GOODPUT_ASSIGN_OR_RETURN(p.ladder, Ladder(a.concurrency, a.rate, a.burstiness, p.workload));
  GOODPUT_ASSIGN_OR_RETURN(p.hw, ResolveHardware(a.d));
  GOODPUT_ASSIGN_OR_RETURN(p.setup, BuildSetup(a, p.hw));
  return p;
}

struct Outcome {
  std::string setting;  // "" or "max-num-seqs=32"
  std::string header;
  std::vector<PointResult> points;
  std::optional<size_t> capacity;
  bool capped = false;
};

std::string Header(const SimArgs& a, const Prepared& p) {
  const Plan& plan = p.setup.plan;
  const SloSpec slo = p.workload.Slo();
  return fmt::format(
      "goodput sim: {} on {} x{} ({} weights, {} KV, {} blocks of {} tokens, max_num_seqs {}, policy {})\n"
      "workload {} ({} requests per run, {} repeat{}), SLO: {}\n\n",
      plan.model.name, p.hw.name, plan.options.tensor_parallel, plan.precision.name, DTypeName(plan.kv_dtype),
      plan.capacity.num_blocks, plan.layout.attention_block_size, plan.options.max_num_seqs, a.policy,
      p.workload.name, p.workload.requests, a.repeat, a.repeat == 1 ? "" : "s",
      slo.empty() ? std::string("none") : slo.ToString());
}

Result<Outcome> RunOne(const SimArgs& a, const std::string& setting) {
  GOODPUT_ASSIGN_OR_RETURN(Prepared p, Prepare(a));
  Outcome out;
  out.setting = setting;
  out.header = Header(a, p);
  const std::string prefix = setting.empty() ? "" : setting + ": ";
  auto run = [&](const ArrivalSpec& load) {
    Progress(fmt::format("sim: {}load {} ({} x {} requests)", prefix, LoadLabel(load), a.repeat, p.workload.requests));
    return RunPoint(p.workload, load, p.setup.options, *p.setup.cost, a.repeat);
  };
  GOODPUT_ASSIGN_OR_RETURN(SweepResult r, a.capacity ? RunCapacitySearch(run, p.ladder.front(), a.max_load, p.workload.requests)
                                                      : RunLadder(run, p.ladder));
  out.points = std::move(r.points);
  out.capacity = r.capacity;
  out.capped = r.capped;
  return out;
}

Result<std::vector<Outcome>> RunAll(const SimArgs& a) {
  if (a.sweep.size() > 1) return Status::InvalidArgument("--sweep varies one setting at a time; give it once");
  if (a.sweep.empty()) {
    GOODPUT_ASSIGN_OR_RETURN(Outcome o, RunOne(a, ""));
    return std::vector<Outcome>{std::move(o)};
  }
  const std::string& spec = a.sweep[0];
  const size_t eq = spec.find('=');
  if (eq == std::string::npos) return Status::InvalidArgument(fmt::format("--sweep '{}' must look like FLAG=V1,V2", spec));
  const std::string flag = spec.substr(0, eq);
  std::vector<Outcome> outs;
  size_t start = eq + 1;
  for (size_t i = start; i <= spec.size(); ++i) {
    if (i < spec.size() && spec[i] != ',') continue;
    const std::string setting = flag + "=" + spec.substr(start, i - start);
    start = i + 1;
    SimArgs base = a;
    base.sweep.clear();
    auto changed = WithFlagChanged(base, setting, AddSimFlags);
    if (!changed.ok()) return changed.status().WithContext("--sweep");
    GOODPUT_ASSIGN_OR_RETURN(Outcome o, RunOne(*changed, setting));
    outs.push_back(std::move(o));
  }
  return outs;
}

double GoodputAtCapacity(const Outcome& o) { return o.capacity ? o.points[*o.capacity].goodput : 0; }

std::string Ranking(std::vector<Outcome> outs) {
  std::stable_sort(outs.begin(), outs.end(),
                   [](const Outcome& x, const Outcome& y) { return GoodputAtCapacity(x) > GoodputAtCapacity(y); });
  std::string s = fmt::format("Settings ranked by goodput at capacity\n  {:<32}{:>12}{:>16}{:>16}\n", "setting",
                              "capacity", "goodput req/s", "throughput tok/s");
  for (const auto& o : outs) {
    const PointResult* c = o.capacity ? &o.points[*o.capacity] : nullptr;
    s += fmt::format("  {:<32}{:>12}{:>16.2f}{:>16.0f}\n", o.setting, c ? c->label : "none", c ? c->goodput : 0.0,
                     c ? c->throughput : 0.0);
  }
  return s;
}

boost::json::value OutcomesToJson(const std::vector<Outcome>& outs) {
  boost::json::array results;
  for (const auto& o : outs) {
    boost::json::array points;
    for (const auto& p : o.points) points.push_back(PointToJson(p));
    results.push_back(boost::json::object{
        {"setting", o.setting},
        {"points", points},
        {"capacity", o.capacity ? boost::json::value(o.points[*o.capacity].label) : boost::json::value(nullptr)},
        {"capacity_capped", o.capped}});
  }
  return boost::json::object{{"results", results}};
}

int RunSim(const SimArgs& a) {
  auto outs = RunAll(a);
  Progress("");
  if (!outs.ok()) throw CLI::RuntimeError("goodput sim: " + outs.status().message(), 2);
  if (a.json) {
    std::cout << boost::json::serialize(OutcomesToJson(*outs)) << "\n";
    return 0;
  }
  for (const auto& o : *outs) {
    if (!o.setting.empty()) std::cout << "=== " << o.setting << " ===\n";
    std::cout << o.header << FormatPointTable(o.points) << "\n" << FormatCapacity(o.points, o.capacity, o.capped) << "\n";
  }
  if (outs->size() > 1) std::cout << Ranking(*outs);
  return 0;
}

}  // namespace

Result<std::unique_ptr<Target>> MakeSimTarget(const std::string& model, const std::string& gpu,
                                              const std::vector<std::string>& flags) {
  SimArgs a;
  CLI::App app;
  AddSimFlags(app, a);
  std::vector<std::string> args = {"--model", model, "--gpu", gpu};
  args.insert(args.end(), flags.begin(), flags.end());
  std::reverse(args.begin(), args.end());  // CLI11 parses a vector from its back
  try {
    app.parse(args);
  } catch (const CLI::ParseError& e) {
    return Status::InvalidArgument(fmt::format("sim flags '{}': {}", fmt::join(flags, " "), e.what()));
  }
  GOODPUT_ASSIGN_OR_RETURN(HardwareSpec hw, ResolveHardware(a.d));
  GOODPUT_ASSIGN_OR_RETURN(SimSetup setup, BuildSetup(a, hw));
  const Plan& plan = setup.plan;
  const std::string describe = fmt::format(
      "sim:{} ({}, {} weights, {} KV, {} blocks, max_num_seqs {}, policy {}{}{})", gpu, plan.model.name,
      plan.precision.name, DTypeName(plan.kv_dtype), plan.capacity.num_blocks, plan.options.max_num_seqs, a.policy,
      flags.empty() ? "" : "; ", fmt::join(flags, " "));
  return std::unique_ptr<Target>(SimTarget::FromSetup(std::move(setup), describe));
}

void AddSimCommand(CLI::App& app) {
  auto args = std::make_shared<SimArgs>();
  CLI::App* sim = app.add_subcommand(
      "sim", "Simulate the engine's scheduler on a GPU's cost model: TTFT/TPOT, attainment, goodput, capacity");
  AddSimFlags(*sim, *args);
  sim->footer(kFooter);
  CLI::App* cap = sim->add_subcommand("capacity", "Search the highest load at which every class holds its SLO");
  cap->fallthrough();
  cap->callback([args]() { args->capacity = true; });
  sim->final_callback([args]() {
    const int rc = RunSim(*args);
    if (rc != 0) throw CLI::RuntimeError(rc);
  });
}

}  // namespace goodput
