#include "cli/plan_command.h"

#include "cli/deployment_flags.h"

#include <iostream>
#include <memory>

#include <boost/json.hpp>
#include <fmt/format.h>

#include "core/units.h"
#include "hw/hardware.h"
#include "model/catalog.h"
#include "plan/plan_report.h"
#include "plan/planner.h"

namespace goodput {
namespace {

struct PlanArgs {
  DeploymentArgs d;
  std::string lengths_file, length_dist;
  double confidence = 0.99;
  std::vector<std::string> compare;
  bool json = false, list_models = false, list_gpus = false;
};

constexpr const char* kFooter = R"(Definitions:
  requested    = total x --gpu-memory-utilization (what vLLM may use)
  KV pool      = requested - weights - activation peak - non-torch (vLLM V1 profiling),
                 or --kv-cache-memory when given; CUDA graphs are captured afterwards and
                 come out of the headroom (total - requested).
  activation peak = the larger of the profiling run's forward over --max-num-batched-tokens
                 and its sampler over min(--max-num-seqs, that budget) sequences (vLLM 0.11;
                 docs/plan.md).
  blocks       = KV pool / page size / layers per KV cache group (vLLM's num_blocks).
  GPU KV cache size is printed two ways, as vLLM has: max concurrency x max model len
  (current) and blocks / groups x block size (earlier releases).
  max concurrent requests = KV pool / mean request size, where a request's size is the
  blocks it holds at its peak (prompt + output tokens; sliding layers hold their window,
  state layers one block). The conservative value n keeps n x mean + z x sqrt(n) x sd
  within the pool (z for --confidence, normal approximation); it is the recommended
  max_num_seqs.
  Estimates (weights from the config's parameter count, activation, non-torch, CUDA
  graphs) are replaced by measured values from a vLLM log when given.
  Token counts: k = 1000, K = 1024, m = 10^6, M = 2^20 (as vLLM's --max-model-len).
)";

void AddPlanFlags(CLI::App& c, PlanArgs& a) {
  AddDeploymentFlags(c, a.d, kEngineSizeFlags);
  c.add_flag("--disable-flashinfer-q-quantization", a.d.disable_q_quantization,
             "With an fp8 KV cache keep the query in the model dtype, as vLLM's attention config "
             "disable_flashinfer_q_quantization: on sm100 each prefill then copies its pages to 16 bits, memory "
             "no profile counts (docs/plan.md)");
  c.add_option("--lengths", a.lengths_file, "File of request lengths (prompt + output tokens), one per line");
  c.add_option("--length-dist", a.length_dist,
               "Length distribution: fixed:8k | 0-200k:0.7,200k-500k:0.3 | p50=2k,p90=8k,p100=32k");
  c.add_option("--confidence", a.confidence, "Probability for the conservative concurrency")->capture_default_str();
  c.add_option("--compare", a.compare, "Also plan with one flag changed, side by side, e.g. kv-cache-dtype=fp8");
  c.add_flag("--json", a.json, "Print JSON instead of tables");
  c.add_flag("--list-models", a.list_models, "List the catalog's models and exit");
  c.add_flag("--list-gpus", a.list_gpus, "List the hardware catalog and exit");
}

Result<PlanOptions> ToOptions(const PlanArgs& a) {
  GOODPUT_ASSIGN_OR_RETURN(PlanOptions o, ToPlanOptions(a.d));
  if (!a.lengths_file.empty() && !a.length_dist.empty()) {
    return Status::InvalidArgument("give --lengths or --length-dist, not both");
  }
  if (!a.lengths_file.empty()) {
    GOODPUT_ASSIGN_OR_RETURN(o.lengths, LengthDistribution::FromFile(a.lengths_file));
  }
  if (!a.length_dist.empty()) {
    auto d = LengthDistribution::FromSpec(a.length_dist);
    if (!d.ok()) return d.status().WithContext("--length-dist");
    o.lengths = std::move(*d);
  }
  o.confidence = a.confidence;
  return o;
}

// `--compare kv-cache-dtype=fp8`: the same flags with one changed.
Result<PlanArgs> WithChange(const PlanArgs& base, const std::string& change) {
  const std::string flag = change.substr(0, change.find('='));
  for (const char* fixed : {"compare", "--compare", "json", "--json", "model", "--model", "m", "-m"}) {
    if (flag == fixed) return Status::InvalidArgument(fmt::format("--compare cannot change {}", flag));
  }
  PlanArgs cleared = base;
  cleared.compare.clear();
  auto changed = WithFlagChanged(cleared, change, AddPlanFlags);
  if (!changed.ok()) return changed.status().WithContext("--compare");
  if (flag == "gpu" || flag == "--gpu") changed->d.gpu_memory.clear();
  if (flag == "gpu-memory" || flag == "--gpu-memory") changed->d.gpu.clear();
  return changed;
}

Result<Plan> PlanFor(const PlanArgs& a) {
  GOODPUT_ASSIGN_OR_RETURN(ModelSpec model, LoadModel(a.d.model));
  GOODPUT_ASSIGN_OR_RETURN(PlanOptions o, ToOptions(a));
  return MakePlan(model, o);
}

// A card as goodput sim's cost model takes it: dense peaks by format (null
// where the card has none: that format runs weight-only) and the factors.
boost::json::object GpuToJson(const HardwareSpec& g) {
  boost::json::object o{{"name", g.name},
                        {"display", g.display},
                        {"memory_bytes", g.memory_bytes},
                        {"total_memory_bytes", g.TotalMemoryBytes()},
                        {"memory_bandwidth", g.memory_bandwidth},
                        {"bandwidth_efficiency", g.bandwidth_efficiency},
                        {"compute_efficiency", g.compute_efficiency},
                        {"kernel_latency_s", g.kernel_latency_s},
                        {"overlap", g.overlap},
                        {"link_bandwidth", g.link_bandwidth},
                        {"link_latency_s", g.link_latency_s}};
  for (const auto& [key, peak] :
       {std::pair{"bf16_flops", g.bf16_flops}, {"fp8_flops", g.fp8_flops}, {"fp4_flops", g.fp4_flops}}) {
    o[key] = peak ? boost::json::value(*peak) : boost::json::value(nullptr);
  }
  for (const auto& [key, by_precision] :
       {std::pair{"compute_efficiency_by_precision", &g.compute_efficiency_by_precision},
        {"attention_efficiency_by_precision", &g.attention_efficiency_by_precision},
        {"expert_efficiency_by_precision", &g.expert_efficiency_by_precision}}) {
    boost::json::object by_format;
    for (const auto& [format, e] : *by_precision) by_format[format] = e;
    o[key] = std::move(by_format);
  }
  o["source"] = g.source;
  return o;
}

// One line of --list-gpus: what the cost model runs each format at.
std::string GpuLine(const HardwareSpec& g) {
  const auto tflops = [](const std::optional<double>& peak) {
    return peak ? fmt::format("{:>7.0f}", *peak / 1e12) : fmt::format("{:>7}", "-");
  };
  std::string matmul = fmt::format("{:.2f}", g.compute_efficiency);
  for (const auto& [format, e] : g.compute_efficiency_by_precision) matmul += fmt::format(", {} {:.2f}", format, e);
  for (const auto& [format, e] : g.expert_efficiency_by_precision) {
    matmul += fmt::format(", {} experts {:.3g}", format, e);
  }
  return fmt::format("{:<12} {:<31} {:>6.1f} GB  {:>5.2f} TB/s ({:.2f})  {} {} {}  {}\n", g.name, g.display,
                     g.memory_bytes / 1e9, g.memory_bandwidth / 1e12, g.bandwidth_efficiency, tflops(g.bf16_flops),
                     tflops(g.fp8_flops), tflops(g.fp4_flops), matmul);
}

void ListGpus(bool json) {
  auto gpus = LoadHardwareCatalog();
  if (!gpus.ok()) throw CLI::RuntimeError(gpus.status().message(), 1);
  if (json) {
    boost::json::array cards;
    for (const auto& g : *gpus) cards.push_back(GpuToJson(g));
    std::cout << boost::json::serialize(cards) << "\n";
    return;
  }
  std::cout << fmt::format("{:<12} {:<31} {:>9}  {:>17}  {:>7} {:>7} {:>7}  {}\n", "card", "", "memory",
                           "bandwidth (eff.)", "BF16", "FP8", "FP4", "matmul efficiency");
  for (const auto& g : *gpus) std::cout << GpuLine(g);
  std::cout << "BF16/FP8/FP4: dense peak TFLOP/s (no sparsity); weights in a format without one (-) run "
               "weight-only at the 16-bit peak.\nSources: data/hardware/gpus.json (--json prints them).\n";
}

void ListCatalogs(const PlanArgs& a) {
  if (a.list_models) {
    for (const auto& name : CatalogModelNames()) std::cout << name << "\n";
  }
  if (a.list_gpus) ListGpus(a.json);
}

int RunPlan(const PlanArgs& a) {
  if (a.list_models || a.list_gpus) {
    ListCatalogs(a);
    return 0;
  }
  if (a.d.model.empty()) throw CLI::RuntimeError("goodput plan: --model is required (see --list-models)", 2);
  std::vector<std::pair<std::string, Plan>> plans;
  auto base = PlanFor(a);
  if (!base.ok()) throw CLI::RuntimeError("goodput plan: " + base.status().message(), 2);
  plans.emplace_back("", std::move(*base));
  for (const auto& change : a.compare) {
    auto args = WithChange(a, change);
    auto plan = args.ok() ? PlanFor(*args) : Result<Plan>(args.status());
    if (!plan.ok()) throw CLI::RuntimeError("goodput plan: " + plan.status().message(), 2);
    plans.emplace_back(change, std::move(*plan));
  }
  if (a.json) {
    boost::json::array docs;
    for (const auto& [change, plan] : plans) {
      boost::json::object doc = PlanToJson(plan).as_object();
      doc["change"] = change;
      docs.push_back(std::move(doc));
    }
    std::cout << boost::json::serialize(plans.size() == 1 ? docs[0] : boost::json::value(docs)) << "\n";
  } else {
    for (size_t i = 0; i < plans.size(); ++i) {
      if (i > 0) std::cout << "\n=== with " << plans[i].first << " ===\n\n";
      std::cout << FormatPlanTable(plans[i].second);
    }
    for (size_t i = 1; i < plans.size(); ++i) {
      std::cout << "\n" << FormatPlanComparison(plans[0].second, plans[i].second, plans[i].first);
    }
  }
  const bool starts = plans[0].second.startup_error.empty();
  return starts ? 0 : 3;
}

}  // namespace

void AddPlanCommand(CLI::App& app) {
  auto args = std::make_shared<PlanArgs>();
  CLI::App* c = app.add_subcommand(
      "plan", "Count GPU memory the way vLLM allocates it: KV capacity, max concurrency, recommended max_num_seqs");
  AddPlanFlags(*c, *args);
  c->footer(kFooter);
  c->callback([args]() {
    const int rc = RunPlan(*args);
    if (rc != 0) throw CLI::RuntimeError(rc);
  });
}

}  // namespace goodput
