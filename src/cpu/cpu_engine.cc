#include "cpu/cpu_engine.h"

#include <filesystem>

#include <fmt/format.h>

#include "core/data_dir.h"
#include "core/host.h"
#include "core/units.h"
#include "cpu/small_matmul.h"
#include "cpu/weights.h"
#include "model/catalog.h"
#include "model/params.h"

namespace goodput::cpu {
namespace {

std::string ModelDir(const std::string& name_or_path) {
  namespace fs = std::filesystem;
  for (const auto& n : CatalogModelNames()) {
    if (n == name_or_path) return (fs::path(DataDir()) / "models" / n).string();
  }
  if (fs::is_directory(name_or_path)) return name_or_path;
  return fs::path(name_or_path).parent_path().string();
}

Result<std::unique_ptr<Tokenizer>> MakeTokenizer(const CpuEngineConfig& c, const std::string& dir) {
  std::string path = c.tokenizer;
  if (path.empty() && !dir.empty() && std::filesystem::exists(dir + "/tokenizer.json")) path = dir + "/tokenizer.json";
  if (path.empty()) return std::unique_ptr<Tokenizer>(std::make_unique<ByteTokenizer>());
  GOODPUT_ASSIGN_OR_RETURN(auto bpe, BpeTokenizer::Load(path));
  return std::unique_ptr<Tokenizer>(std::move(bpe));
}

Result<ModelWeights> MakeWeights(const CpuEngineConfig& c, const ModelSpec& m, const std::string& dir) {
  bool has_files = false;
  std::error_code ec;
  if (!dir.empty()) {
    for (const auto& e : std::filesystem::directory_iterator(dir, ec))
      has_files |= e.path().extension() == ".safetensors";
  }
  const std::string format = c.load_format == "auto" ? (has_files ? "safetensors" : "dummy") : c.load_format;
  if (format == "dummy") return DummyWeights(m, c.seed);
  if (format == "safetensors") return LoadSafetensorsWeights(m, dir);
  return Status::InvalidArgument(fmt::format("--load-format '{}': use auto, dummy or safetensors", c.load_format));
}

// The runner holds fp32 weights and the KV pool in this process: a model
// that cannot fit is refused before any of it is allocated.
Status CheckHostMemory(const ModelSpec& m, int64_t kv_bytes) {
  const int64_t weights = CountParams(m).total() * static_cast<int64_t>(sizeof(float));
  const int64_t available = HostMemoryAvailableBytes();
  if (available > 0 && weights + kv_bytes > available) {
    return Status::InvalidArgument(fmt::format(
        "{}: its fp32 weights ({}) and the KV cache ({}) need more memory than this host has available ({})", m.name,
        FormatGiB(weights), FormatGiB(kv_bytes), FormatGiB(available)));
  }
  return Status::Ok();
}

// The slo policy's longest step: the TPOT target x headroom.
Status SetSloStepTarget(const CpuEngineConfig& c, SchedulerConfig& sc) {
  if (sc.policy != SchedulingPolicy::kSlo) return Status::Ok();
  if (!c.slo_tpot) return Status::InvalidArgument("--scheduling-policy slo needs --slo-tpot (e.g. 100ms)");
  if (*c.slo_tpot <= 0 || c.slo_headroom <= 0 || c.slo_headroom > 1) {
    return Status::InvalidArgument("--slo-tpot must be positive and --slo-headroom in (0, 1]");
  }
  sc.slo_step_target = *c.slo_tpot * c.slo_headroom;
  return Status::Ok();
}

// The model, its tokenizer and the engine settings resolved for the CPU.
Status LoadModelAndSettings(const CpuEngineConfig& c, CpuEngine& e) {
  GOODPUT_ASSIGN_OR_RETURN(e.model, LoadModel(c.model));
  GOODPUT_RETURN_IF_ERROR(CheckCpuSupported(e.model));
  GOODPUT_RETURN_IF_ERROR(KernelIsaFromEnvironment().status());
  GOODPUT_ASSIGN_OR_RETURN(e.tokenizer, MakeTokenizer(c, ModelDir(c.model)));
  if (e.tokenizer->vocab_size() > e.model.vocab_size) {
    return Status::InvalidArgument(fmt::format("the tokenizer has {} tokens but the model only {}",
                                               e.tokenizer->vocab_size(), e.model.vocab_size));
  }
  e.config = c.engine;
  GOODPUT_RETURN_IF_ERROR(ValidateEngineConfig(e.config));
  ResolveEngineDefaults(e.config, EngineDevice::kCpu, e.model.max_position_embeddings);
  SchedulerConfig& sc = e.config.scheduler;
  GOODPUT_RETURN_IF_ERROR(SetSloStepTarget(c, sc));
  sc.eos_token_id = e.model.eos_token_ids.empty() ? e.tokenizer->eos_id() : e.model.eos_token_ids.front();
  return Status::Ok();
}

}  // namespace

Result<CpuEngine> LoadCpuEngineSettings(const CpuEngineConfig& config) {
  CpuEngine e;
  GOODPUT_RETURN_IF_ERROR(LoadModelAndSettings(config, e));
  return e;
}

Result<CpuEngine> LoadCpuEngine(const CpuEngineConfig& config) {
  GOODPUT_ASSIGN_OR_RETURN(CpuEngine e, LoadCpuEngineSettings(config));
  const SchedulerConfig& sc = e.config.scheduler;
  const CacheConfig& cache = e.config.cache;
  GOODPUT_ASSIGN_OR_RETURN(KvFormat format, KvFormatFor(cache.kv_cache_dtype, e.model.dtype));
  e.layout = MakeCpuKvLayout(e.model, cache.block_size);
  e.num_blocks = CpuKvBlocksFor(e.model, e.layout, format, cache.block_size, *cache.kv_cache_memory);
  e.capacity = CapacityForBlocks(e.layout.groups, e.num_blocks, sc.max_model_len, sc.max_num_batched_tokens);
  if (e.capacity.max_concurrency < 1) {
    return Status::InvalidArgument(fmt::format(
        "--kv-cache-memory {} holds {} blocks, less than one {}-token request needs; raise it or lower --max-model-len",
        FormatGiB(*cache.kv_cache_memory), e.num_blocks, sc.max_model_len));
  }
  GOODPUT_RETURN_IF_ERROR(CheckHostMemory(e.model, *cache.kv_cache_memory));
  GOODPUT_ASSIGN_OR_RETURN(ModelWeights weights, MakeWeights(config, e.model, ModelDir(config.model)));
  GOODPUT_ASSIGN_OR_RETURN(
      e.runner, CpuModelRunner::Create(e.model, std::move(weights), e.layout, format, e.num_blocks, cache.block_size));
  return e;
}

}  // namespace goodput::cpu
