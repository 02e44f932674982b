#include "cli/deployment_flags.h"

#include "core/units.h"

namespace goodput {
namespace {

Status ParseSize(const std::string& text, const char* flag, std::optional<int64_t>* out) {
  if (text.empty()) return Status::Ok();
  auto v = ParseBytes(text);
  if (!v.ok()) return v.status().WithContext(flag);
  *out = *v;
  return Status::Ok();
}

}  // namespace

void AddEngineHostFlag(CLI::App& app, DeploymentArgs& a) {
  app.add_option("--engine", a.engine_host,
                 "The serving engine whose host-side costs (step overhead, per-request cost, front end) every step "
                 "and request carry, from data/hardware/engines.json (docs/calibration.md): vllm (default; fitted "
                 "to published vLLM runs), vllm-v0 (vLLM's V0 engine, before 0.8: fitted to its published runs), "
                 "trtllm (TensorRT-LLM's PyTorch backend: its measured host cost, overlapped with the GPU's work), "
                 "trtllm-cpp (TensorRT-LLM's TensorRT engines under its C++ executor, before 1.0: fitted to their "
                 "published runs), sglang (SGLang's scheduling: prompts before decodes, in chunks, and its overlap "
                 "scheduler; host costs not measured) or none (the GPU work alone)");
}

void AddDeploymentFlags(CLI::App& c, DeploymentArgs& a, unsigned engine_flags) {
  c.add_option("--model,-m", a.model, "Catalog model name or path to a config.json (or its directory)");
  c.add_option("--gpu", a.gpu, "GPU from the hardware catalog (see goodput plan --list-gpus)");
  c.add_option("--gpu-memory", a.gpu_memory, "Total GPU memory instead of --gpu, e.g. 79.18GiB");
  c.add_option("--tensor-parallel-size,--tp", a.tensor_parallel, "GPUs the model is split across")
      ->capture_default_str();
  c.add_flag("--enable-expert-parallel", a.expert_parallel, "MoE: whole experts per GPU (vLLM's flag), not slices");
  c.add_option("--data-parallel-size,--dp", a.data_parallel,
               "Replicas of --tp GPUs each, with their own requests and KV cache (vLLM's flag; SGLang's DP "
               "attention): MoE layers span all of them, so the replicas step together")
      ->capture_default_str();
  c.add_option("--routing-imbalance", a.routing_imbalance,
               "Expert parallel: the busiest GPU's token load over the mean (1 = uniform routing)")
      ->capture_default_str();
  c.add_option("--weights", a.weights,
               "Weight precision: auto (the checkpoint's), bf16, fp16, fp32, fp8, fp8-block, int8, int4 (g128), "
               "mxfp4, nvfp4")
      ->capture_default_str();
  c.add_option("--unquantized", a.unquantized,
               "Parts a quantized checkpoint leaves in the model dtype (its config's ignore list), comma-separated: "
               "attention, dense-mlp, shared-experts, draft (the multi-token-prediction layers); e.g. "
               "attention,draft for NVIDIA's NVFP4 DeepSeek-R1 (docs/sim.md)");
  c.add_option("--mxfp4-moe-backend", a.mxfp4_moe_backend,
               "vLLM's MXFP4 MoE kernel, which pads the experts: auto (vLLM's pick for the GPU: marlin below "
               "sm90, triton on sm90, flashinfer-sm100 on sm100), marlin, triton, flashinfer-sm90, flashinfer-sm100, "
               "rocm")
      ->capture_default_str();
  c.add_option("--mamba-ssm-cache-dtype", a.mamba_ssm_cache_dtype,
               "Recurrent state type: auto (the config's mamba_ssm_dtype, else the model dtype), fp32, bf16")
      ->capture_default_str();
  CLI::Option* utilization =
      c.add_option("--gpu-memory-utilization", a.utilization, "Share of total memory vLLM may use")
          ->capture_default_str();
  c.add_option("--mem-fraction-static", a.mem_fraction_static,
               "Instead, SGLang's share of total memory for the weights and the KV pool (no activation peak taken out "
               "of it: docs/plan.md)")
      ->excludes(utilization);
  c.add_option("--kernel-block-alignment", a.kernel_block_alignment,
               "Hybrid models: the attention block size is raised in steps of this")
      ->capture_default_str();
  c.add_option("--num-draft-layers", a.num_draft_layers,
               "EAGLE-style draft layers sharing the KV pool (0 with --num-speculative-tokens: the checkpoint's "
               "multi-token-prediction layers where it has them, as vLLM's mtp method; else drafts cost nothing, as "
               "n-gram drafting)")
      ->capture_default_str();
  c.add_flag("--disable-hybrid-kv-cache-manager", a.disable_hybrid, "Keep sliding-window layers whole, as vLLM's flag");
  c.add_option("--weights-memory", a.weights_memory, "Measured weights (vLLM: 'Model loading took X GiB')");
  c.add_option("--activation-memory", a.activation_memory, "Measured activation peak of vLLM's profiling run");
  c.add_option("--non-torch-memory", a.non_torch_memory, "Measured non-torch memory");
  c.add_option("--cuda-graph-memory", a.cuda_graph_memory,
               "Measured CUDA graph memory ('Graph capturing ... took X GiB')");
  c.add_option("--safety-buffer", a.safety_buffer, "Headroom wanted beyond CUDA graphs")->capture_default_str();
  AddEngineFlags(c, a.engine, engine_flags);
}

Result<HardwareSpec> ResolveHardware(const DeploymentArgs& a) {
  if (!a.gpu.empty() && !a.gpu_memory.empty()) return Status::InvalidArgument("give --gpu or --gpu-memory, not both");
  if (!a.gpu.empty()) return FindGpu(a.gpu);
  if (a.gpu_memory.empty()) return Status::InvalidArgument("give --gpu NAME or --gpu-memory SIZE");
  auto mem = ParseBytes(a.gpu_memory);
  if (!mem.ok()) return mem.status().WithContext("--gpu-memory");
  HardwareSpec h;
  GOODPUT_ASSIGN_OR_RETURN(const CatalogDefaults defaults, LoadCatalogDefaults());
  h.kernel_latency_s = defaults.kernel_latency_s;
  h.overlap = defaults.overlap;
  h.name = "custom " + FormatGiB(*mem);
  h.memory_bytes = *mem;
  h.usable_memory_gib = ToGiB(*mem);
  return h;
}

Result<PlanOptions> ToPlanOptions(const DeploymentArgs& a) {
  GOODPUT_ASSIGN_OR_RETURN(HardwareSpec hw, ResolveHardware(a));
  return ToPlanOptions(a, hw);
}

Result<PlanOptions> ToPlanOptions(const DeploymentArgs& a, const HardwareSpec& hw) {
  PlanOptions o;
  o.gpu = hw.name;
  o.cpu = hw.cpu;
  o.total_memory = a.gpu_memory.empty() ? hw.TotalMemoryBytes() : hw.memory_bytes;
  o.total_is_nominal = hw.total_is_nominal();
  o.tensor_parallel = a.tensor_parallel;
  o.expert_parallel = a.expert_parallel;
  o.data_parallel = a.data_parallel;
  if (!(a.routing_imbalance >= 1)) return Status::InvalidArgument("--routing-imbalance must be at least 1");
  o.routing_imbalance = a.routing_imbalance;
  o.weights = a.weights;
  o.unquantized = a.unquantized;
  o.gpu_arch = hw.arch;
  o.mxfp4_moe_backend = a.mxfp4_moe_backend;
  o.mamba_ssm_cache_dtype = a.mamba_ssm_cache_dtype;
  o.gpu_memory_utilization = a.utilization;
  o.mem_fraction_static = a.mem_fraction_static;
  GOODPUT_ASSIGN_OR_RETURN(o.engine, ToEngineConfig(a.engine));
  o.kernel_block_alignment = a.kernel_block_alignment;
  o.num_draft_layers = a.num_draft_layers;
  o.disable_hybrid_kv_cache_manager = a.disable_hybrid;
  o.disable_flashinfer_q_quantization = a.disable_q_quantization;
  GOODPUT_RETURN_IF_ERROR(ParseSize(a.weights_memory, "--weights-memory", &o.weights_memory));
  GOODPUT_RETURN_IF_ERROR(ParseSize(a.activation_memory, "--activation-memory", &o.activation_memory));
  GOODPUT_RETURN_IF_ERROR(ParseSize(a.non_torch_memory, "--non-torch-memory", &o.non_torch_memory));
  GOODPUT_RETURN_IF_ERROR(ParseSize(a.cuda_graph_memory, "--cuda-graph-memory", &o.cuda_graph_memory));
  std::optional<int64_t> buffer;
  GOODPUT_RETURN_IF_ERROR(ParseSize(a.safety_buffer, "--safety-buffer", &buffer));
  o.safety_buffer = buffer.value_or(o.safety_buffer);
  return o;
}

}  // namespace goodput
