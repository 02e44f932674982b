#include "cli/sim_command.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <memory>

#include <boost/json.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "calibrate/calibration.h"
#include "calibrate/engine_calibration.h"
#include "cli/cost_flags.h"
#include "cli/deployment_flags.h"
#include "cli/disaggregation_flags.h"
#include "cli/explain_step_command.h"
#include "cli/measurement_flags.h"
#include "core/definitions.h"
#include "core/text.h"
#include "core/units.h"
#include "engine/step_log.h"
#include "model/catalog.h"
#include "measure/fleet_size.h"
#include "measure/measurement.h"
#include "measure/offline_remedies.h"
#include "measure/point_report.h"
#include "sim/setup.h"
#include "sim/sim_target.h"
#include "workload/workload.h"

namespace goodput {
namespace {

struct SimArgs {
  bool no_ledger = false;  // taken for bench's command lines; sim keeps no ledger
  DeploymentArgs d;
  MeasurementArgs m;
  std::optional<double> acceptance_rate, draft_acceptance, mean_acceptance_length;
  CostArgs cost;
  int guaranteed_no_evict = 0, chunked_prefill = 0;  // +1 the flag, -1 its --no- form, 0 the engine's
  std::string calibration, gpu_bandwidth, gpu_flops, gpu_flops_fp8, gpu_flops_fp4, step_log;
  std::string explain_step;  // a batch to price part by part instead of simulating
  bool capacity = false;  // set by the `capacity` subcommand
  bool fleet = false;     // set by the `fleet` subcommand
  int max_replicas = 64;
  bool split_fleet = false;  // fleet --disaggregated
  bool compare_offline = false;
  int offline_cap = 4;
  FleetArgs fleet_args;
};

constexpr LoadUse kSimLoads{/*ladder=*/true, /*capacity=*/true};

constexpr const char* kCostModel = R"(Step time = host + GPU (with async scheduling: the longer of the two), where
host = overhead + per-request cost x requests and GPU = kernels x kernel latency
  + max(compute, memory) + (1 - overlap) x min(compute, memory) + tensor-parallel all-reduces
  + data-parallel expert all-gathers + drafting (for a step computing a prompt, or a decode step of more
  requests than the engine's CUDA graphs hold: --cuda-graph-max-batch, at least its kernels x the host's
  launch time where the engine runs such steps eagerly: --eager-prompt-kernel);
compute = FLOPs / (peak x efficiency at the step's tokens; a MoE's routed experts at their
kernel's own where the GPU's entry gives one), memory = bytes / (bandwidth x bandwidth
efficiency). Before the scheduler sees a request, the engine's front end (its API server) may
take a fixed latency (--frontend-latency).
Efficiencies come from the GPU's catalog entry, the overhead, per-request cost and front end
from the engine's (--engine, data/hardware/engines.json), or all from --calibration (goodput
calibrate), unless overridden.
)";

void AddSimFlags(CLI::App& c, SimArgs& a) {
  AddDeploymentFlags(c, a.d, kEngineSizeFlags | kEngineSchedulingFlags | kEngineSpeculativeFlags);
  a.m.repeat = 3;
  AddMeasurementFlags(c, a.m, kSimLoads);
  c.add_option("--draft-acceptance", a.draft_acceptance,
               "Speculative decoding: vLLM's draft acceptance rate, accepted / proposed drafts (e.g. 0.3)");
  c.add_option("--mean-acceptance-length", a.mean_acceptance_length,
               "Speculative decoding: vLLM's mean acceptance length, tokens per verifying step with the bonus token "
               "(e.g. 3.4 at 8 drafts and 30% acceptance)");
  c.add_option("--acceptance-rate", a.acceptance_rate,
               "Speculative decoding: the chance each draft position is accepted, in turn until the first rejection "
               "(default 0.7; --draft-acceptance and --mean-acceptance-length give vLLM's figures instead)");
  AddCostFlags(c, a.cost);
  c.add_flag("--guaranteed-no-evict,!--no-guaranteed-no-evict", a.guaranteed_no_evict,
             "Override whether the scheduler admits a request only while the KV cache also holds every running "
             "request's blocks to its max tokens, so none is preempted (TensorRT-LLM's GUARANTEED_NO_EVICT; off: "
             "vLLM's admission, as TensorRT-LLM's MAX_UTILIZATION; default: --engine's)");
  c.add_flag("--enable-chunked-prefill,!--no-enable-chunked-prefill", a.chunked_prefill,
             "Override whether a prompt may be split over steps (vLLM's flag); without, a prompt enters a step "
             "whole or waits, and one over --max-num-batched-tokens is refused (TensorRT-LLM's default; default: "
             "--engine's)");
  AddEngineHostFlag(c, a.d);
  c.add_option("--calibration", a.calibration,
               "A calibration file (goodput calibrate): its hardware and fitted factors replace --gpu's (with "
               "--weights in another format than it was fitted with, carried over through the card's catalog "
               "entry)");
  c.add_option("--gpu-bandwidth", a.gpu_bandwidth, "With --gpu-memory (a card outside the catalog): memory "
                                                   "bandwidth, e.g. 3.35TB/s");
  c.add_option("--gpu-flops", a.gpu_flops, "With --gpu-memory: dense BF16 FLOP/s, e.g. 989T");
  c.add_option("--gpu-flops-fp8", a.gpu_flops_fp8,
               "With --gpu-memory: dense FP8 FLOP/s, e.g. 1979T (without it FP8 weights run weight-only at the BF16 "
               "figure, as on a card without FP8 tensor cores)");
  c.add_option("--gpu-flops-fp4", a.gpu_flops_fp4,
               "With --gpu-memory: dense FP4 FLOP/s, e.g. 9P (without it FP4 weights run weight-only)");
  AddFleetFlags(c, a.fleet_args);
  c.add_flag("--compare-offline", a.compare_offline,
             "A day profile (a workload with profile_step): run it three ways, offline work as given, moved to the "
             "quiet hours, and as given under priority scheduling with --offline-cap, and compare each class's "
             "verdict window by window (docs/sim.md, \"A day\")");
  c.add_option("--offline-cap", a.offline_cap, "With --compare-offline: the priority arrangement's --max-offline-seqs")
      ->capture_default_str();
  c.add_option("--step-log", a.step_log,
               "Write every simulated step as goodput serve --step-log does (each run of each load in turn; "
               "each --vary setting starts it anew): to set beside goodput serve's, or fit with "
               "goodput calibrate steps --from-step-log");
  c.add_option("--explain-step", a.explain_step,
               "Instead of simulating, price one step of this batch part by part and say what bounds it: "
               "N@CONTEXT (N decodes), N@CONTEXT+NEW (N requests computing NEW tokens), comma-separated");
}

// The simulator target the flags describe: deployment, KV pool and cost
// model. `flags` (as given, for --target sim:GPU) end its description.
// The hardware and plan options the flags name: a calibration's, a catalog
// GPU, or a card given by its memory, bandwidth and FLOP/s.
struct SimHardware {
  HardwareSpec hw;
  PlanOptions plan;
  std::optional<Calibration> calibration;
};

// A card outside the catalog (--gpu-memory): its bandwidth and dense FLOP/s
// per format, as given.
Status ApplyCardFigures(const SimArgs& a, HardwareSpec& hw) {
  if (a.gpu_bandwidth.empty() || a.gpu_flops.empty()) {
    return Status::InvalidArgument("a card given by --gpu-memory needs --gpu-bandwidth and --gpu-flops too");
  }
  auto bw = ParseRate(a.gpu_bandwidth, "B/s");
  if (!bw.ok()) return bw.status().WithContext("--gpu-bandwidth");
  hw.memory_bandwidth = *bw;
  for (auto [flag, text, field] : {std::tuple{"--gpu-flops", &a.gpu_flops, &hw.bf16_flops},
                                   std::tuple{"--gpu-flops-fp8", &a.gpu_flops_fp8, &hw.fp8_flops},
                                   std::tuple{"--gpu-flops-fp4", &a.gpu_flops_fp4, &hw.fp4_flops}}) {
    if (text->empty()) continue;
    auto flops = ParseRate(*text, "FLOPS");
    if (!flops.ok()) return flops.status().WithContext(flag);
    *field = *flops;
  }
  return Status::Ok();
}

Result<SimHardware> ResolveSimHardware(const SimArgs& a) {
  SimHardware h;
  if (!a.calibration.empty()) {
    if (!a.d.gpu.empty() || !a.d.gpu_memory.empty()) {
      return Status::InvalidArgument("--calibration names the hardware: give it or --gpu/--gpu-memory, not both");
    }
    GOODPUT_ASSIGN_OR_RETURN(h.calibration, LoadCalibration(a.calibration));
    h.hw = h.calibration->hardware;
    GOODPUT_ASSIGN_OR_RETURN(h.plan, ToPlanOptions(a.d, h.hw));  // the usable total, as for its catalog entry
  } else {
    GOODPUT_ASSIGN_OR_RETURN(h.hw, ResolveHardware(a.d));
    if (!a.d.gpu_memory.empty()) {
      GOODPUT_RETURN_IF_ERROR(ApplyCardFigures(a, h.hw));
    } else if (!a.gpu_bandwidth.empty() || !a.gpu_flops.empty() || !a.gpu_flops_fp8.empty() ||
               !a.gpu_flops_fp4.empty()) {
      return Status::InvalidArgument(
          "--gpu-bandwidth and --gpu-flops(-fp8/-fp4) describe a card given by --gpu-memory");
    }
    GOODPUT_ASSIGN_OR_RETURN(h.plan, ToPlanOptions(a.d, h.hw));
  }
  return h;
}

// The per-position chance the simulator draws drafts with, from whichever of
// the three acceptance flags is given (at most one).
Result<double> PerPositionChance(const SimArgs& a) {
  const int given =
      a.acceptance_rate.has_value() + a.draft_acceptance.has_value() + a.mean_acceptance_length.has_value();
  if (given > 1) {
    return Status::InvalidArgument("give one of --acceptance-rate, --draft-acceptance and --mean-acceptance-length");
  }
  const int k = a.d.engine.num_speculative_tokens;
  if (a.draft_acceptance) {
    if (!(*a.draft_acceptance >= 0 && *a.draft_acceptance <= 1)) {
      return Status::InvalidArgument("--draft-acceptance must be in [0, 1]");
    }
  }
  if (a.draft_acceptance || a.mean_acceptance_length) {
    const double accepted = a.draft_acceptance ? *a.draft_acceptance * k : *a.mean_acceptance_length - 1;
    auto p = PerPositionAcceptance(k, accepted);
    if (!p.ok()) return p.status().WithContext(a.draft_acceptance ? "--draft-acceptance" : "--mean-acceptance-length");
    return p;
  }
  const double rate = a.acceptance_rate.value_or(0.7);
  if (!(rate >= 0 && rate <= 1)) return Status::InvalidArgument("--acceptance-rate must be in [0, 1]");
  return rate;
}

// The setup of `model` on `h` (the hardware the flags name), before the fleet.
Result<SimSetup> SetupFor(const SimArgs& a, const ModelSpec& model, const SimHardware& h) {
  if (h.calibration && !a.d.engine_host.empty()) {
    return Status::InvalidArgument("--engine: a calibration carries its own host costs");
  }
  GOODPUT_ASSIGN_OR_RETURN(SimSetup setup, h.calibration
                                               ? SetupCalibratedSimulation(model, h.plan, *h.calibration)
                                               : SetupSimulation(model, h.plan, h.hw, nullptr, EngineHostName(a.d)));
  GOODPUT_RETURN_IF_ERROR(ApplyCostOverrides(OverridesOf(a.cost), kCostOverrideFlags, setup));
  SchedulerConfig& sc = setup.options.scheduler;
  if (a.guaranteed_no_evict != 0) sc.guaranteed_no_evict = a.guaranteed_no_evict > 0;
  if (a.chunked_prefill != 0) sc.chunked_prefill = a.chunked_prefill > 0;
  return setup;
}

// --prefill-tp: the prefill instances planned at their own size on `h` (the
// same card, engine settings and cost overrides; what --weights-memory and
// its kin measured belongs to the decode instances' size, so the planner
// counts the prefill instances' own); their KV pool joins `setup`'s start-up
// lines.
Status PlanPrefillPool(const SimArgs& a, const ModelSpec& model, SimHardware h, SimSetup& setup) {
  const int tp = *a.fleet_args.prefill_tp;
  h.plan.tensor_parallel = tp;
  h.plan.weights_memory = h.plan.activation_memory = h.plan.non_torch_memory = h.plan.cuda_graph_memory = {};
  auto prefill = SetupFor(a, model, h);
  if (!prefill.ok()) return prefill.status().WithContext(fmt::format("--prefill-tp {}", tp));
  auto pool = std::make_shared<PrefillPool>();
  pool->tensor_parallel = tp;
  pool->scheduler = prefill->options.scheduler;
  pool->kv_groups = prefill->options.kv_groups;
  pool->num_blocks = prefill->options.num_blocks;
  pool->kv_block_bytes = prefill->options.kv_block_bytes;
  pool->cost = std::move(prefill->cost);
  setup.options.prefill_pool = std::move(pool);
  for (const std::string& line :
       Split(KvCapacityLogLines(prefill->plan.capacity, prefill->plan.options.engine.scheduler.max_model_len), '\n')) {
    if (!line.empty()) setup.startup_lines.push_back(fmt::format("prefill instances (x{}): {}", tp, line));
  }
  return Status::Ok();
}

// The simulation the flags describe and its hardware.
Result<SimDeployment> BuildSimDeployment(const SimArgs& a) {
  GOODPUT_ASSIGN_OR_RETURN(ModelSpec model, LoadModel(a.d.model));
  GOODPUT_ASSIGN_OR_RETURN(SimHardware h, ResolveSimHardware(a));
  GOODPUT_ASSIGN_OR_RETURN(const double acceptance, PerPositionChance(a));
  GOODPUT_ASSIGN_OR_RETURN(SimSetup setup, SetupFor(a, model, h));
  setup.options.acceptance_rate = acceptance;
  GOODPUT_RETURN_IF_ERROR(ApplyFleet(a.fleet_args, h.hw, a.d.tensor_parallel, setup.options));
  if (PrefillSizedApart(a.fleet_args, a.d.tensor_parallel)) {
    GOODPUT_RETURN_IF_ERROR(PlanPrefillPool(a, model, h, setup));
  }
  if (!a.step_log.empty()) {
    GOODPUT_ASSIGN_OR_RETURN(setup.options.step_observer, OpenStepLog(a.step_log));
  }
  return SimDeployment{std::move(setup), h.hw, h.calibration ? h.calibration->model : ""};
}

Result<std::unique_ptr<Target>> BuildSimTarget(const SimArgs& a, const std::string& flags) {
  GOODPUT_ASSIGN_OR_RETURN(SimDeployment d, BuildSimDeployment(a));
  std::string where = !a.calibration.empty() ? a.calibration : !a.d.gpu.empty() ? a.d.gpu : d.hardware.name;
  // Another model's calibration is allowed (its factors are mostly the
  // hardware's and the engine's) but never silent: the description, printed
  // beside every figure and kept in the ledger, says whose it was.
  if (!d.calibration_model.empty() && d.calibration_model != d.setup.plan.model.name) {
    where += fmt::format(" (fitted on {})", d.calibration_model);
  }
  const std::string describe = DescribeSimTarget(d.setup, where, flags);
  return std::unique_ptr<Target>(std::make_unique<SimTarget>(std::move(d.setup), describe));
}

// The simulator target of one setting: the flags `a` gives with the
// setting's changed. `a` must outlive the factory.
TargetFactory SimTargetFactory(const SimArgs& a) {
  return [&a](const Setting& s) -> Result<std::unique_ptr<Target>> {
    SimArgs changed = a;
    for (const Setting::Flag& f : s.flags) {
      auto next = WithFlagChanged(changed, f.name + "=" + f.value, AddSimFlags);
      if (!next.ok()) return next.status().WithContext("--vary");
      changed = std::move(*next);
    }
    return BuildSimTarget(changed, "");
  };
}

MeasurementHooks SimProgress() {
  MeasurementHooks hooks;
  hooks.progress = [](const std::string& line) { Progress("sim: " + line); };
  return hooks;
}

Result<std::vector<SettingResult>> RunAll(const SimArgs& a, const MeasurementSpec& spec) {
  // The deployment is checked before anything runs, varied or not.
  GOODPUT_RETURN_IF_ERROR(BuildSimTarget(a, "").status());
  return Measure(spec, SimTargetFactory(a), SimProgress());
}

// --compare-offline: the three arrangements of the day's offline work.
int RunOfflineComparison(const SimArgs& a, const MeasurementSpec& spec) {
  auto built = BuildSimTarget(a, "");  // the deployment is checked before anything runs
  auto results = built.ok() ? CompareOfflineArrangements(spec, a.offline_cap, SimTargetFactory(a), SimProgress())
                            : Result<std::vector<ArrangementResult>>(built.status());
  Progress("");
  if (!results.ok()) throw CLI::RuntimeError("goodput sim: " + results.status().message(), 2);
  if (a.m.json) {
    std::cout << boost::json::serialize(OfflineComparisonToJson(*results)) << "\n";
  } else {
    std::cout << FormatOfflineComparison(*results);
  }
  return 0;
}

// `goodput sim fleet`: the fewest replicas that hold the load.
int RunFleet(const SimArgs& a, const MeasurementSpec& spec) {
  if (a.max_replicas < 1 || a.max_replicas > kMaxReplicas) {
    throw CLI::RuntimeError(fmt::format("goodput sim fleet: --max-replicas must be 1 to {}", kMaxReplicas), 2);
  }
  // The aggregated instances are all --tp; a split's prefill instances may be --prefill-tp.
  SimArgs together = a;
  together.fleet_args.prefill_tp.reset();
  auto built = BuildSimTarget(together, "");  // the deployment is checked before anything runs
  if (built.ok() && a.fleet_args.prefill_replicas > 0) {
    built = Status::InvalidArgument("the search sets the prefill and decode instances itself: drop --prefill-replicas");
  } else if (built.ok() && a.fleet_args.prefill_tp && !a.split_fleet) {
    built = Status::InvalidArgument("--prefill-tp sizes the prefill instances of a split: give --disaggregated");
  }
  auto fleet = built.ok() ? SearchFleetSize(spec, a.max_replicas, a.d.tensor_parallel * a.d.data_parallel,
                                            SimTargetFactory(together), SimProgress())
                          : Result<FleetSize>(built.status());
  if (fleet.ok() && a.split_fleet) {
    fleet->gpus_per_prefill = a.fleet_args.prefill_tp.value_or(a.d.tensor_parallel) * a.d.data_parallel;
    const Status split = SearchDisaggregatedFleet(spec, SimTargetFactory(a), SimProgress(), *fleet);
    if (!split.ok()) fleet = split;
  }
  Progress("");
  if (!fleet.ok()) throw CLI::RuntimeError("goodput sim fleet: " + fleet.status().message(), 2);
  if (a.m.json) {
    std::cout << boost::json::serialize(FleetSizeToJson(*fleet)) << "\n";
  } else {
    std::cout << FormatFleetSize(*fleet, spec.workload);
  }
  return 0;
}

// --compare-aggregated's answer: both capacities on the same GPUs and their
// ratio: of the loads for arrival rates, of the output throughputs for
// concurrency (clients are not work: the split serves its clients faster or
// slower).
std::string DisaggregationGain(const FleetArgs& f, const std::vector<SettingResult>& results) {
  const PointResult *split = nullptr, *together = nullptr;
  for (const SettingResult& r : results) {
    if (!r.sweep.capacity) continue;
    const bool aggregated = r.setting.find("aggregated=true") != std::string::npos;
    (aggregated ? together : split) = &r.sweep.points[*r.sweep.capacity];
  }
  const int decode = f.DecodeReplicas();
  const PointResult* either = split ? split : together;
  const bool closed = either && either->load.kind == ArrivalKind::kClosedLoop;
  const auto text = [closed](const PointResult* p) {
    if (!p) return std::string("none held");
    return closed ? fmt::format("{} clients ({:.0f} tok/s)", LoadLabel(p->load), p->throughput) : LoadLabel(p->load);
  };
  const auto measure = [closed](const PointResult& p) { return closed ? p.throughput : LoadOf(p); };
  const std::string prefill_size = f.prefill_tp ? fmt::format(" x{}", *f.prefill_tp) : "";
  std::string line =
      fmt::format("disaggregated ({} prefill{} + {} decode instances): capacity {}; the same GPUs aggregated: {}",
                  f.prefill_replicas, prefill_size, decode, text(split), text(together));
  if (split && together && measure(*together) > 0) {
    line += fmt::format("; gain {:.2f}x{}", measure(*split) / measure(*together), closed ? " in output tok/s" : "");
  }
  return line + "\n";
}

int RunSim(const SimArgs& a) {
  const Status model = a.d.model.empty()
                           ? Status::InvalidArgument("--model is required (see goodput plan --list-models)")
                           : Status::Ok();
  if (model.ok() && !a.explain_step.empty()) {  // one step priced: no workload or loads to read
    const Status s = ExplainStepCommand(a.explain_step, BuildSimDeployment(a), a.m.json);
    if (!s.ok()) throw CLI::RuntimeError("goodput sim: " + s.message(), 2);
    return 0;
  }
  auto spec = model.ok() ? ToMeasurementSpec(a.m, kSimLoads, a.capacity) : Result<MeasurementSpec>(model);
  if (spec.ok() && a.compare_offline) return RunOfflineComparison(a, *spec);
  if (spec.ok() && a.fleet) return RunFleet(a, *spec);
  if (spec.ok() && a.fleet_args.compare_aggregated) spec->vary.push_back(Vary{"aggregated", {"false", "true"}});
  auto results = spec.ok() ? RunAll(a, *spec) : Result<std::vector<SettingResult>>(spec.status());
  Progress("");
  if (!results.ok()) throw CLI::RuntimeError("goodput sim: " + results.status().message(), 2);
  if (a.m.json) {
    std::cout << boost::json::serialize(ResultsToJson(*results)) << "\n";
    return 0;
  }
  std::cout << FormatResults(*results, spec->workload, spec->repeat, spec->max_repeat, /*lag_threshold_s=*/0.010);
  if (a.fleet_args.compare_aggregated) std::cout << DisaggregationGain(a.fleet_args, *results);
  return 0;
}

// goodput sim's flags for `model` on `gpu` (sim:FILE: a calibration file
// names the hardware; sim:NAME a catalog GPU) with `flags` after them.
Result<SimArgs> ParseSimFlags(const std::string& model, const std::string& gpu, const std::vector<std::string>& flags) {
  SimArgs a;
  CLI::App app;
  AddSimFlags(app, a);
  const bool calibration = std::filesystem::is_regular_file(gpu);
  std::vector<std::string> args = {"--model", model, calibration ? "--calibration" : "--gpu", gpu};
  args.insert(args.end(), flags.begin(), flags.end());
  std::reverse(args.begin(), args.end());  // CLI11 parses a vector from its back
  try {
    app.parse(args);
  } catch (const CLI::ParseError& e) {
    return Status::InvalidArgument(fmt::format("sim flags '{}': {}", fmt::join(flags, " "), e.what()));
  }
  return a;
}

}  // namespace

Result<std::unique_ptr<Target>> MakeSimTarget(const std::string& model, const std::string& gpu,
                                              const std::vector<std::string>& flags) {
  GOODPUT_ASSIGN_OR_RETURN(SimArgs a, ParseSimFlags(model, gpu, flags));
  return BuildSimTarget(a, fmt::format("{}", fmt::join(flags, " ")));
}

Result<SimDeployment> MakeSimDeployment(const std::string& model, const std::string& gpu,
                                        const std::vector<std::string>& flags) {
  GOODPUT_ASSIGN_OR_RETURN(SimArgs a, ParseSimFlags(model, gpu, flags));
  return BuildSimDeployment(a);
}

void AddSimCommand(CLI::App& app) {
  auto args = std::make_shared<SimArgs>();
  CLI::App* sim = app.add_subcommand(
      "sim", "Simulate the engine's scheduler on a GPU's cost model: TTFT/TPOT, attainment, goodput, capacity");
  AddSimFlags(*sim, *args);
  // sim keeps no ledger (nothing it prints depends on this host); the flag is
  // taken so a bench command line runs as sim unchanged.
  sim->add_flag("--no-ledger", args->no_ledger, "Accepted for bench's command lines: sim keeps no ledger");
  sim->footer(std::string(kMetricDefinitions) + kCostModel);
  CLI::App* cap = sim->add_subcommand("capacity", "Search the highest load at which every class holds its SLO");
  cap->fallthrough();
  cap->callback([args]() { args->capacity = true; });
  CLI::App* fleet = sim->add_subcommand(
      "fleet",
      "The fewest replicas (engine instances behind --router) at which every class holds its SLO at the load "
      "given: GPUs needed = replicas x GPUs per replica");
  fleet->fallthrough();
  fleet->add_option("--max-replicas", args->max_replicas, "The most replicas to try")->capture_default_str();
  fleet->add_flag("--disaggregated", args->split_fleet,
                  "Also search prefill/decode splits (each --prefill-replicas P with the fewest --decode-replicas D "
                  "that hold) for a fleet of fewer GPUs than the aggregated answer (prefill instances of "
                  "--prefill-tp GPUs when given)");
  fleet->callback([args]() { args->fleet = true; });
  sim->final_callback([args]() {
    const int rc = RunSim(*args);
    if (rc != 0) throw CLI::RuntimeError(rc);
  });
}

}  // namespace goodput
