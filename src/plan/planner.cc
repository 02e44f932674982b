#include "plan/planner.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "core/stats.h"
#include "core/units.h"
#include "hw/hardware.h"

namespace goodput {
namespace {

constexpr int64_t kGiB = int64_t{1} << 30;

Status Validate(const ModelSpec& m, const PlanOptions& o) {
  if (o.total_memory <= 0) return Status::InvalidArgument("GPU memory must be positive (give --gpu or --gpu-memory)");
  if (!(o.gpu_memory_utilization > 0 && o.gpu_memory_utilization <= 1)) {
    return Status::InvalidArgument(
        fmt::format("--gpu-memory-utilization {} must be in (0, 1]", o.gpu_memory_utilization));
  }
  if (o.mem_fraction_static) {
    if (!(*o.mem_fraction_static > 0 && *o.mem_fraction_static <= 1)) {
      return Status::InvalidArgument(fmt::format("--mem-fraction-static {} must be in (0, 1]", *o.mem_fraction_static));
    }
    if (o.engine.cache.kv_cache_memory) {
      return Status::InvalidArgument("give --mem-fraction-static or --kv-cache-memory, not both");
    }
  }
  if (o.tensor_parallel < 1) return Status::InvalidArgument("--tensor-parallel-size must be at least 1");
  if (o.data_parallel < 1) return Status::InvalidArgument("--data-parallel-size must be at least 1");
  if (m.attn.num_heads > 0 && m.attn.num_heads % o.tensor_parallel != 0) {
    return Status::InvalidArgument(fmt::format("{} attention heads are not divisible by --tensor-parallel-size {}",
                                               m.attn.num_heads, o.tensor_parallel));
  }
  if (m.linear.num_value_heads > 0 && m.linear.num_value_heads % o.tensor_parallel != 0) {
    return Status::InvalidArgument(
        fmt::format("{} linear-attention value heads are not divisible by --tensor-parallel-size {}",
                    m.linear.num_value_heads, o.tensor_parallel));
  }
  GOODPUT_RETURN_IF_ERROR(ValidateEngineConfig(o.engine));
  if (!(o.confidence > 0.5 && o.confidence < 1)) return Status::InvalidArgument("--confidence must be in (0.5, 1)");
  if (o.num_draft_layers < 0) return Status::InvalidArgument("--num-draft-layers must be >= 0");
  return Status::Ok();
}

Result<DType> ResolveKvDtype(const std::string& name, const ModelSpec& m) {
  if (name == "auto") return m.dtype;
  auto t = ParseDType(name);
  if (!t.ok()) return t.status().WithContext("--kv-cache-dtype");
  if (*t == DType::kInt8) return Status::InvalidArgument("--kv-cache-dtype int8 is not a vLLM KV cache type");
  return t;
}

Result<ModelSpec> WithDraftLayers(const ModelSpec& m, int n) {
  if (n == 0) return m;
  const std::optional<LayerSpec> draft = m.DraftLayer();
  if (!draft) return Status::InvalidArgument("--num-draft-layers needs a model with attention layers to copy");
  ModelSpec out = m;
  out.layers.insert(out.layers.end(), n, *draft);
  return out;
}

std::vector<KindShare> KindShares(const ModelSpec& m, const KvLayout& layout, int64_t max_len) {
  std::vector<KindShare> out;
  for (size_t i = 0; i < layout.layer_specs.size(); ++i) {
    const CacheSpec& s = layout.layer_specs[i];
    auto it = std::find_if(out.begin(), out.end(), [&](const KindShare& k) { return k.kind == s.kind; });
    if (it == out.end()) {
      out.push_back(KindShare{s.kind});
      it = out.end() - 1;
    }
    ++it->layers;
    if (s.is_state()) {
      it->bytes_per_sequence = s.state_bytes;
      it->bytes_max_len += s.state_bytes;
    } else {
      it->bytes_per_token = s.bytes_per_token;
      const int64_t held =
          s.group.type == KvGroupSpec::Type::kSlidingWindow ? std::min(max_len, s.group.sliding_window) : max_len;
      it->bytes_max_len += s.bytes_per_token * held;
    }
  }
  double sum = 0;
  for (const auto& k : out) sum += static_cast<double>(k.bytes_max_len);
  for (auto& k : out) k.share = sum > 0 ? static_cast<double>(k.bytes_max_len) / sum : 0;
  return out;
}

LengthPlan PlanLengths(const LengthDistribution& dist, const Plan& p) {
  const PlanOptions& o = p.options;
  LengthPlan lp;
  lp.description = dist.description();
  lp.over_max_len_share = dist.Expect([&](int64_t l) { return l > o.engine.scheduler.max_model_len ? 1.0 : 0.0; });
  const LengthDistribution capped = dist.CappedAt(o.engine.scheduler.max_model_len);
  lp.mean_length = capped.Mean();
  lp.quantile_length = capped.Quantile(o.confidence);
  const int64_t t = o.engine.scheduler.max_num_batched_tokens;
  const std::vector<KvGroupSpec> groups = p.layout.EngineGroups();
  auto blocks = [&](int64_t l) { return static_cast<double>(PeakBlocks(groups, l, t)); };
  lp.mean_blocks = capped.Expect(blocks);
  const double second = capped.Expect([&](int64_t l) { return blocks(l) * blocks(l); });
  lp.sd_blocks = std::sqrt(std::max(0.0, second - lp.mean_blocks * lp.mean_blocks));
  const double n_blocks = static_cast<double>(p.capacity.num_blocks);
  lp.max_concurrent_mean = lp.mean_blocks > 0 ? n_blocks / lp.mean_blocks : 0;
  // n*mean + z*sqrt(n)*sd <= N, solved for x = sqrt(n).
  const double z = NormalQuantile(o.confidence);
  const double mu = lp.mean_blocks, sd = lp.sd_blocks;
  const double x = mu > 0 ? (-z * sd + std::sqrt(z * z * sd * sd + 4 * mu * n_blocks)) / (2 * mu) : 0;
  lp.conservative = static_cast<int64_t>(std::floor(x * x + 1e-9));
  lp.recommended_max_num_seqs = std::max<int64_t>(1, lp.conservative);
  lp.kv_binds = lp.conservative < o.engine.scheduler.max_num_seqs;
  return lp;
}

// The longest max_model_len whose one request still fits the pool.
int64_t EstimateMaxModelLen(const KvLayout& layout, int64_t num_blocks, int64_t upper, int64_t t) {
  const std::vector<KvGroupSpec> groups = layout.EngineGroups();
  if (ReservedBlocks(groups, 1, t) > num_blocks) return 0;
  int64_t lo = 1, hi = upper;
  while (lo < hi) {
    const int64_t mid = lo + (hi - lo + 1) / 2;
    if (ReservedBlocks(groups, mid, t) <= num_blocks) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

void ComputeMemory(Plan& p) {
  const PlanOptions& o = p.options;
  p.total = o.total_memory;
  const double share = o.mem_fraction_static.value_or(o.gpu_memory_utilization);
  p.requested = static_cast<int64_t>(std::floor(static_cast<double>(o.total_memory) * share));
  // SGLang sizes its pool from the memory free after loading (weights, CUDA
  // context, NCCL) less the share it leaves out; vLLM also takes out its
  // profiled activation peak.
  const int64_t activation = o.mem_fraction_static ? 0 : p.activation.bytes;
  const int64_t non_kv = p.weights.bytes + activation + p.non_torch.bytes;
  if (o.engine.cache.kv_cache_memory) {
    p.kv_pool = *o.engine.cache.kv_cache_memory;
    p.headroom = p.total - non_kv - p.kv_pool;
  } else {
    p.kv_pool = p.requested - non_kv;
    p.headroom = p.total - p.requested;
  }
}

}  // namespace

void VllmKvCacheMemorySuggestion(Plan& p) {
  // Pinned, vLLM skips profiling and suggests nothing; SGLang's share is not vLLM's.
  if (p.options.engine.cache.kv_cache_memory || p.options.mem_fraction_static) return;
  const int64_t non_kv = p.weights.bytes + p.activation.bytes + p.non_torch.bytes + p.cuda_graphs.bytes;
  p.suggest_requested = p.requested - non_kv - kVllmRedundancyBuffer;
  p.suggest_full = p.total - non_kv - kVllmRedundancyBuffer;
}

namespace {

void CheckStartup(Plan& p) {
  const PlanOptions& o = p.options;
  if (p.kv_pool <= 0) {
    const bool sglang = o.mem_fraction_static.has_value();
    p.startup_error = fmt::format(
        "No available memory for the cache blocks: {} non-torch memory take {} of the {} requested. Raise {}, "
        "quantize the weights or add GPUs.",
        sglang ? "weights and" : "weights, activations and", FormatGiB(p.requested - p.kv_pool), FormatGiB(p.requested),
        sglang ? "--mem-fraction-static" : "--gpu-memory-utilization");
    return;
  }
  if (p.blocks_per_max_request > p.capacity.num_blocks) {
    p.estimated_max_model_len = EstimateMaxModelLen(p.layout, p.capacity.num_blocks, o.engine.scheduler.max_model_len,
                                                    o.engine.scheduler.max_num_batched_tokens);
    p.startup_error = fmt::format(
        "To serve at least one request with the model's max seq len ({}), {} of KV cache is needed, which is larger "
        "than the available KV cache memory ({}). Based on the available memory, the estimated maximum model length "
        "is {}.",
        o.engine.scheduler.max_model_len,
        FormatGiB(p.blocks_per_max_request * p.layout.page_bytes * p.layout.group_size), FormatGiB(p.kv_pool),
        p.estimated_max_model_len);
  }
  if (p.headroom < 0) {
    p.startup_error = fmt::format("weights, activations, non-torch memory and the KV pool exceed the GPU's {} by {}",
                                  FormatGiB(p.total), FormatGiB(-p.headroom));
  }
}

void AddWarnings(Plan& p) {
  const PlanOptions& o = p.options;
  if (o.total_is_nominal) {
    p.warnings.push_back(fmt::format("{} is the nominal capacity of {}; CUDA reports a little less. Give "
                                     "--gpu-memory with the total from nvidia-smi or a vLLM log for an exact plan.",
                                     FormatGiB(p.total), o.gpu));
  }
  if (p.startup_error.empty() && p.Margin() < 0) {
    // vllm-project/vllm#52872: the profiling run skips the linear-attention
    // layers, so their prefill intermediates are nowhere in the profiled peak.
    const bool hybrid = std::any_of(p.layout.groups.begin(), p.layout.groups.end(),
                                    [](const CacheGroup& g) { return g.spec.is_state(); });
    p.warnings.push_back(fmt::format(
        "margin: only {} is left outside the KV pool and the profiled memory, but CUDA graphs need about {}{} plus "
        "a {} buffer. The engine may fail to start or crash under load; lower --gpu-memory-utilization or "
        "--kv-cache-memory.{}",
        FormatGiB(p.headroom), FormatGiB(p.cuda_graphs.bytes),
        p.prefill_kv_copy > 0 ? fmt::format(", a prefill's fp8 KV copy {}", FormatGiB(p.prefill_kv_copy)) : "",
        FormatGiB(o.safety_buffer),
        hybrid ? " A hybrid model needs the buffer most: vLLM profiles without its linear-attention layers, whose "
                 "prefill intermediates grow with --max-num-batched-tokens."
               : ""));
  }
  if (p.prefill_kv_copy > 0) {
    p.warnings.push_back(fmt::format(
        "an fp8 KV cache with the query unquantized (--disable-flashinfer-q-quantization): TensorRT-LLM's prefill "
        "kernel on {} reads a {} copy of each prefill's pages, {} per prefilling request in a step (the block "
        "table's full width at max model length {}, whatever the prompt), which vLLM's profiling run does not "
        "count. The margin takes one; a step with N prefills needs about N times it. Quantizing the query (vLLM's "
        "default) or the model dtype's KV cache avoids it (docs/plan.md, \"The margin\").",
        o.gpu, DTypeName(p.model.dtype), FormatGiB(p.prefill_kv_copy), FormatCount(o.engine.scheduler.max_model_len)));
  }
  if (o.engine.cache.kv_cache_memory) {
    p.warnings.push_back(
        "--kv-cache-memory pins the pool: a value measured under one --kv-cache-dtype does not carry over to another: "
        "the block size changes with it (hybrid models), an unquantized query adds a prefill's copy of its pages "
        "(--disable-flashinfer-q-quantization), and one start's figures leave only vLLM's 150 MiB. Re-measure after "
        "changing the KV format.");
  }
  if (o.engine.scheduler.max_model_len > p.model.max_position_embeddings) {
    p.warnings.push_back(
        fmt::format("max model length {} exceeds the model's max_position_embeddings {}: vLLM needs "
                    "rope scaling (e.g. YaRN) or VLLM_ALLOW_LONG_MAX_MODEL_LEN=1, and quality beyond "
                    "the trained length is unmeasured.",
                    FormatCount(o.engine.scheduler.max_model_len), FormatCount(p.model.max_position_embeddings)));
  }
  if (p.lengths && p.lengths->over_max_len_share > 0) {
    p.warnings.push_back(
        fmt::format("{:.1f}% of the length distribution exceeds the max model length {}; vLLM rejects "
                    "those requests (counted here at the max length).",
                    100 * p.lengths->over_max_len_share, FormatCount(o.engine.scheduler.max_model_len)));
  }
  int64_t state_groups = 0;
  for (const auto& g : p.layout.groups) state_groups += g.spec.is_state();
  if (state_groups > 0 && p.capacity.num_blocks / state_groups < o.engine.scheduler.max_num_seqs) {
    p.warnings.push_back(fmt::format(
        "each running sequence holds {} state blocks, so the pool fits the state of at most {} sequences, fewer than "
        "max_num_seqs {}: lower --max-num-seqs",
        state_groups, p.capacity.num_blocks / state_groups, o.engine.scheduler.max_num_seqs));
  }
}

}  // namespace

// vLLM's profiling run does a forward pass over max_num_batched_tokens, frees
// its intermediates and then samples for min(max_num_seqs, tokens) sequences,
// so the peak is the larger of the two, not their sum. Forward: the widest
// intermediate of one layer for every batched token plus the residual stream.
// Sampler: the hidden states it samples from plus kSamplerBytesPerLogit for
// every sequence and vocabulary entry (logits in bf16 and fp32 and the
// temporaries of top-k/top-p sampling, which the dummy sampler run enables).
// Published start-ups on one H100 (llm-d-benchmark's empirical vLLM memory
// results, vLLM 0.11, 1,024 sequences): Llama-3.1-8B 4.76 GiB, the one the
// constant is fitted to; Qwen3-0.6B 5.56, Qwen3-32B 5.64, gpt-oss-20b 7.38,
// Llama-3.3-70B at TP 2 4.84, each within 1% here; the sum of a forward peak
// and 8 fp32 copies of the logits counted before came out 13% low to 9% high.
constexpr double kSamplerBytesPerLogit = 38.4;
int64_t EstimateForwardPeak(const ModelSpec& m, int tp, int64_t max_num_batched_tokens) {
  const int64_t h = m.hidden_size;
  int64_t width = 3 * m.intermediate_size / tp;
  if (m.IsMoe()) {
    width =
        std::max(width, (3 * m.moe.experts_per_token * m.moe.expert_intermediate + 3 * m.moe.shared_intermediate) / tp);
  }
  const int64_t q = m.attn.num_heads * m.attn.head_dim * (m.attn.output_gate ? 2 : 1);
  width = std::max(width, (q + 2 * m.attn.num_kv_heads * m.attn.head_dim) / tp);
  const LinearAttentionDims& l = m.linear;
  width = std::max(width, 2 * (l.num_key_heads * l.key_head_dim + l.num_value_heads * l.value_head_dim) / tp);
  return max_num_batched_tokens * (width + 4 * h) * 2;
}

int64_t EstimateSamplerPeak(const ModelSpec& m, int64_t max_num_batched_tokens, int64_t max_num_seqs) {
  const int64_t sequences = std::min(max_num_seqs, max_num_batched_tokens);
  const int64_t logits = static_cast<int64_t>(static_cast<double>(sequences * m.vocab_size) * kSamplerBytesPerLogit);
  return max_num_batched_tokens * m.hidden_size * 2 + logits;
}

// vLLM measured 0.13 GiB on one H100; NCCL buffers add about half a GiB with
// tensor parallelism.
int64_t EstimateNonTorch(int tp) { return tp > 1 ? 640 * (int64_t{1} << 20) : 140 * (int64_t{1} << 20); }

int64_t PrefillKvCopyBytes(const Plan& p) {
  const PlanOptions& o = p.options;
  const bool fp8 = p.kv_dtype == DType::kFp8E4M3 || p.kv_dtype == DType::kFp8E5M2;
  // is_device_capability_family(100): sm100 and sm103.
  if (o.cpu || !fp8 || !o.disable_flashinfer_q_quantization || SmVersion(o.gpu_arch) / 10 != 10) return 0;
  const auto attention = std::find_if(p.layout.layer_specs.begin(), p.layout.layer_specs.end(),
                                      [](const CacheSpec& s) { return !s.is_state() && s.kind != LayerKind::kMla; });
  const int64_t block = p.layout.attention_block_size;
  if (attention == p.layout.layer_specs.end() || block <= 0) return 0;
  if (!p.model.attn.sinks && block <= 64) return 0;  // FlashInfer's own prefill reads the fp8 pages
  const int64_t pages = (o.engine.scheduler.max_model_len + block - 1) / block + 1;
  return pages * block * attention->bytes_per_token / DTypeBytes(p.kv_dtype) * DTypeBytes(p.model.dtype);
}

// Typical "Graph capturing finished ... took X GiB" values run 0.3-2 GiB.
int64_t EstimateCudaGraphs() { return kGiB; }

Result<Plan> MakePlan(const ModelSpec& model, const PlanOptions& options) {
  GOODPUT_RETURN_IF_ERROR(Validate(model, options));
  Plan p;
  p.model = model;
  p.options = options;
  PlanOptions& o = p.options;
  // vLLM's MTP method: a checkpoint's own multi-token-prediction layers draft.
  if (o.engine.scheduler.num_speculative_tokens > 0 && o.num_draft_layers == 0) o.num_draft_layers = model.mtp_layers;
  ResolveEngineDefaults(o.engine, o.cpu ? EngineDevice::kCpu : GpuDevice(o.total_memory, o.gpu),
                        model.max_position_embeddings);
  GOODPUT_ASSIGN_OR_RETURN(p.kv_dtype, ResolveKvDtype(o.engine.cache.kv_cache_dtype, model));
  if (o.mamba_ssm_cache_dtype == "auto") {
    p.ssm_dtype = model.ssm_state_dtype.value_or(model.dtype);
  } else {
    auto ssm = ParseDType(o.mamba_ssm_cache_dtype);
    if (!ssm.ok()) return ssm.status().WithContext("--mamba-ssm-cache-dtype");
    p.ssm_dtype = *ssm;
  }
  GOODPUT_ASSIGN_OR_RETURN(ModelSpec with_draft, WithDraftLayers(model, o.num_draft_layers));
  KvLayoutOptions ko;
  ko.kv_dtype = p.kv_dtype;
  ko.conv_state_dtype = model.dtype;
  ko.ssm_state_dtype = p.ssm_dtype;
  ko.block_size = o.engine.cache.block_size;
  ko.kernel_block_alignment = o.kernel_block_alignment;
  ko.tensor_parallel = o.tensor_parallel;
  ko.max_model_len = o.engine.scheduler.max_model_len;
  ko.max_num_batched_tokens = o.engine.scheduler.max_num_batched_tokens;
  ko.disable_hybrid_kv_cache_manager = o.disable_hybrid_kv_cache_manager;
  GOODPUT_ASSIGN_OR_RETURN(p.layout, BuildKvLayout(with_draft, ko));
  p.params = CountParams(model);
  ExpertPadding mxfp4_padding;  // the CPU engine keeps the checkpoint's shapes
  if (!o.cpu) {
    auto backend = ResolveMxfp4MoeBackend(o.mxfp4_moe_backend, o.gpu_arch);
    if (!backend.ok()) return backend.status().WithContext("--mxfp4-moe-backend");
    mxfp4_padding = *backend;
  }
  GOODPUT_ASSIGN_OR_RETURN(p.precision, ResolveWeightPrecision(o.weights, model, mxfp4_padding));
  GOODPUT_RETURN_IF_ERROR(LeaveUnquantized(o.unquantized, model, p.precision));
  auto item = [](const std::optional<int64_t>& measured, int64_t estimate) {
    return measured ? MemoryItem{*measured, true} : MemoryItem{estimate, false};
  };
  p.weights = item(o.weights_memory,
                   WeightBytes(p.params, p.precision, model, o.tensor_parallel, o.expert_parallel, MoeGroupSize(o)) +
                       MlaDecodeCopyBytes(model, p.precision, o.tensor_parallel));
  const int64_t forward = EstimateForwardPeak(model, o.tensor_parallel, o.engine.scheduler.max_num_batched_tokens);
  const int64_t sampler =
      EstimateSamplerPeak(model, o.engine.scheduler.max_num_batched_tokens, o.engine.scheduler.max_num_seqs);
  p.activation = item(o.activation_memory, std::max(forward, sampler));
  if (!p.activation.measured) p.activation_peak = forward >= sampler ? "forward" : "sampler";
  p.non_torch = item(o.non_torch_memory, EstimateNonTorch(o.tensor_parallel));
  p.cuda_graphs = item(o.cuda_graph_memory, EstimateCudaGraphs());
  ComputeMemory(p);
  p.prefill_kv_copy = PrefillKvCopyBytes(p);
  p.kinds = KindShares(with_draft, p.layout, o.engine.scheduler.max_model_len);
  p.capacity = ComputeCapacity(p.layout, std::max<int64_t>(0, p.kv_pool), o.engine.scheduler.max_model_len,
                               o.engine.scheduler.max_num_batched_tokens);
  p.blocks_per_max_request = ReservedBlocks(p.layout.EngineGroups(), o.engine.scheduler.max_model_len,
                                            o.engine.scheduler.max_num_batched_tokens);
  CheckStartup(p);
  if (p.startup_error.empty()) VllmKvCacheMemorySuggestion(p);
  if (o.lengths && p.startup_error.empty()) p.lengths = PlanLengths(*o.lengths, p);
  AddWarnings(p);
  return p;
}

}  // namespace goodput
