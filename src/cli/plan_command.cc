#include "cli/plan_command.h"

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

// Flags as typed; sizes and lengths stay strings so our parsers can name what
// is wrong with them.
struct PlanArgs {
  std::string model, gpu, gpu_memory, weights = "auto", kv_cache_dtype = "auto", mamba_ssm_cache_dtype = "auto";
  std::string kv_cache_memory, max_model_len, weights_memory, activation_memory, non_torch_memory,
      cuda_graph_memory, safety_buffer = "1GiB", lengths_file, length_dist;
  int tensor_parallel = 1;
  double utilization = 0.9;
  int64_t max_num_batched_tokens = 0, max_num_seqs = 0, block_size = 0, kernel_block_alignment = 16;
  int num_draft_layers = 0;
  bool disable_hybrid = false;
  double confidence = 0.99;
  std::vector<std::string> compare;
  bool json = false, list_models = false, list_gpus = false;
};

constexpr const char* kFooter = R"(Definitions:
  requested    = total x --gpu-memory-utilization (what vLLM may use)
  KV pool      = requested - weights - activation peak - non-torch (vLLM V1 profiling),
                 or --kv-cache-memory when given; CUDA graphs are captured afterwards and
                 come out of the headroom (total - requested).
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
  c.add_option("--model,-m", a.model, "Catalog model name or path to a config.json (or its directory)");
  c.add_option("--gpu", a.gpu, "GPU from the hardware catalog (see --list-gpus)");
  c.add_option("--gpu-memory", a.gpu_memory, "Total GPU memory instead of --gpu, e.g. 79.18GiB");
  c.add_option("--tensor-parallel-size,--tp", a.tensor_parallel, "GPUs the model is split across")->capture_default_str();
  c.add_option("--weights", a.weights,
               "Weight precision: auto (the checkpoint's), bf16, fp16, fp32, fp8, fp8-block, int8, int4 (g128), "
               "mxfp4, nvfp4")->capture_default_str();
  c.add_option("--kv-cache-dtype", a.kv_cache_dtype, "KV cache type: auto (model dtype), bf16, fp16, fp8, fp8_e5m2")
      ->capture_default_str();
  c.add_option("--mamba-ssm-cache-dtype", a.mamba_ssm_cache_dtype,
               "Recurrent state type: auto (the config's mamba_ssm_dtype, else the model dtype), fp32, bf16")
      ->capture_default_str();
  c.add_option("--gpu-memory-utilization", a.utilization, "Share of total memory vLLM may use")->capture_default_str();
  c.add_option("--kv-cache-memory", a.kv_cache_memory, "KV pool size, as vLLM's --kv-cache-memory (skips utilization)");
  c.add_option("--max-model-len", a.max_model_len, "Max tokens per request (default: max_position_embeddings)");
  c.add_option("--max-num-batched-tokens", a.max_num_batched_tokens,
               "Token budget per step (default: vLLM's, 8192 on >= 70 GiB GPUs, else 2048)");
  c.add_option("--max-num-seqs", a.max_num_seqs, "Sequence cap (default: vLLM's, 1024 on >= 70 GiB GPUs, else 256)");
  c.add_option("--block-size", a.block_size, "Tokens per KV block (default: 16; 64 for MLA; raised for hybrids)");
  c.add_option("--kernel-block-alignment", a.kernel_block_alignment,
               "Hybrid models: the attention block size is raised in steps of this")->capture_default_str();
  c.add_option("--num-draft-layers", a.num_draft_layers, "EAGLE-style draft layers sharing the KV pool")
      ->capture_default_str();
  c.add_flag("--disable-hybrid-kv-cache-manager", a.disable_hybrid, "Keep sliding-window layers whole, as vLLM's flag");
  c.add_option("--weights-memory", a.weights_memory, "Measured weights (vLLM: 'Model loading took X GiB')");
  c.add_option("--activation-memory", a.activation_memory, "Measured activation peak of vLLM's profiling run");
  c.add_option("--non-torch-memory", a.non_torch_memory, "Measured non-torch memory");
  c.add_option("--cuda-graph-memory", a.cuda_graph_memory, "Measured CUDA graph memory ('Graph capturing ... took X GiB')");
  c.add_option("--safety-buffer", a.safety_buffer, "Headroom wanted beyond CUDA graphs")->capture_default_str();
  c.add_option("--lengths", a.lengths_file, "File of request lengths (prompt + output tokens), one per line");
  c.add_option("--length-dist", a.length_dist,
               "Length distribution: fixed:8k | 0-200k:0.7,200k-500k:0.3 | p50=2k,p90=8k,p100=32k");
  c.add_option("--confidence", a.confidence, "Probability for the conservative concurrency")->capture_default_str();
  c.add_option("--compare", a.compare, "Also plan with one flag changed, side by side, e.g. kv-cache-dtype=fp8");
  c.add_flag("--json", a.json, "Print JSON instead of tables");
  c.add_flag("--list-models", a.list_models, "List the catalog's models and exit");
  c.add_flag("--list-gpus", a.list_gpus, "List the hardware catalog and exit");
}

Status ParseSize(const std::string& text, const char* flag, std::optional<int64_t>* out) {
  if (text.empty()) return Status::Ok();
  auto v = ParseBytes(text);
  if (!v.ok()) return v.status().WithContext(flag);
  *out = *v;
  return Status::Ok();
}

Status ResolveGpu(const PlanArgs& a, PlanOptions& o) {
  if (!a.gpu.empty() && !a.gpu_memory.empty()) return Status::InvalidArgument("give --gpu or --gpu-memory, not both");
  if (!a.gpu.empty()) {
    GOODPUT_ASSIGN_OR_RETURN(HardwareSpec g, FindGpu(a.gpu));
    o.gpu = g.name;
    o.total_memory = g.TotalMemoryBytes();
    o.total_is_nominal = g.total_is_nominal();
    return Status::Ok();
  }
  if (a.gpu_memory.empty()) return Status::InvalidArgument("give --gpu NAME or --gpu-memory SIZE");
  auto mem = ParseBytes(a.gpu_memory);
  if (!mem.ok()) return mem.status().WithContext("--gpu-memory");
  o.gpu = "custom " + FormatGiB(*mem);
  o.total_memory = *mem;
  return Status::Ok();
}

Result<PlanOptions> ToOptions(const PlanArgs& a) {
  PlanOptions o;
  GOODPUT_RETURN_IF_ERROR(ResolveGpu(a, o));
  o.tensor_parallel = a.tensor_parallel;
  o.weights = a.weights;
  o.kv_cache_dtype = a.kv_cache_dtype;
  o.mamba_ssm_cache_dtype = a.mamba_ssm_cache_dtype;
  o.gpu_memory_utilization = a.utilization;
  GOODPUT_RETURN_IF_ERROR(ParseSize(a.kv_cache_memory, "--kv-cache-memory", &o.kv_cache_memory));
  if (!a.max_model_len.empty()) {
    auto len = ParseTokenCount(a.max_model_len);
    if (!len.ok()) return len.status().WithContext("--max-model-len");
    o.max_model_len = *len;
  }
  o.max_num_batched_tokens = a.max_num_batched_tokens;
  o.max_num_seqs = a.max_num_seqs;
  o.block_size = a.block_size;
  o.kernel_block_alignment = a.kernel_block_alignment;
  o.num_draft_layers = a.num_draft_layers;
  o.disable_hybrid_kv_cache_manager = a.disable_hybrid;
  GOODPUT_RETURN_IF_ERROR(ParseSize(a.weights_memory, "--weights-memory", &o.weights_memory));
  GOODPUT_RETURN_IF_ERROR(ParseSize(a.activation_memory, "--activation-memory", &o.activation_memory));
  GOODPUT_RETURN_IF_ERROR(ParseSize(a.non_torch_memory, "--non-torch-memory", &o.non_torch_memory));
  GOODPUT_RETURN_IF_ERROR(ParseSize(a.cuda_graph_memory, "--cuda-graph-memory", &o.cuda_graph_memory));
  std::optional<int64_t> buffer;
  GOODPUT_RETURN_IF_ERROR(ParseSize(a.safety_buffer, "--safety-buffer", &buffer));
  o.safety_buffer = buffer.value_or(o.safety_buffer);
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

// `--compare kv-cache-dtype=fp8`: the same flags with one changed, parsed by
// the same definitions so every flag can be compared.
Result<PlanArgs> WithChange(const PlanArgs& base, const std::string& change) {
  const size_t eq = change.find('=');
  if (eq == std::string::npos || eq == 0) {
    return Status::InvalidArgument(fmt::format("--compare '{}' must look like FLAG=VALUE, e.g. kv-cache-dtype=fp8", change));
  }
  std::string flag = change.substr(0, eq);
  if (flag.rfind("--", 0) != 0) flag = "--" + flag;
  if (flag == "--compare" || flag == "--json" || flag == "--model" || flag == "-m") {
    return Status::InvalidArgument(fmt::format("--compare cannot change {}", flag));
  }
  PlanArgs changed = base;
  changed.compare.clear();
  CLI::App app;
  AddPlanFlags(app, changed);
  try {
    app.parse(std::vector<std::string>{flag + "=" + change.substr(eq + 1)});
  } catch (const CLI::ParseError& e) {
    return Status::InvalidArgument(fmt::format("--compare '{}': {}", change, e.what()));
  }
  if (flag == "--gpu") changed.gpu_memory.clear();
  if (flag == "--gpu-memory") changed.gpu.clear();
  return changed;
}

Result<Plan> PlanFor(const PlanArgs& a) {
  GOODPUT_ASSIGN_OR_RETURN(ModelSpec model, LoadModel(a.model));
  GOODPUT_ASSIGN_OR_RETURN(PlanOptions o, ToOptions(a));
  return MakePlan(model, o);
}

void ListCatalogs(const PlanArgs& a) {
  if (a.list_models) {
    for (const auto& name : CatalogModelNames()) std::cout << name << "\n";
  }
  if (a.list_gpus) {
    auto gpus = LoadHardwareCatalog();
    if (!gpus.ok()) throw CLI::RuntimeError(gpus.status().message(), 1);
    for (const auto& g : *gpus) {
      std::cout << fmt::format("{:<12} {:<28} {:>7.1f} GB  {:>5.2f} TB/s  BF16 {:>7.1f} TFLOP/s dense\n", g.name,
                               g.display, g.memory_bytes / 1e9, g.memory_bandwidth / 1e12,
                               g.bf16_flops.value_or(0) / 1e12);
    }
  }
}

int RunPlan(const PlanArgs& a) {
  if (a.list_models || a.list_gpus) {
    ListCatalogs(a);
    return 0;
  }
  if (a.model.empty()) throw CLI::RuntimeError("goodput plan: --model is required (see --list-models)", 2);
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
