#include "server/serving.h"

#include <filesystem>
#include <ostream>

#include <boost/asio.hpp>
#include <fmt/format.h>

#include "core/clock.h"
#include "core/data_dir.h"
#include "core/host.h"
#include "core/units.h"
#include "cpu/cpu_runner.h"
#include "cpu/kernels.h"
#include "cpu/small_matmul.h"
#include "cpu/step_time.h"
#include "engine/engine_service.h"
#include "engine/kv_groups.h"
#include "engine/step_log.h"
#include "model/catalog.h"
#include "model/params.h"
#include "model/tokenizer.h"

namespace goodput::server {

struct Serving::Parts {
  ServeConfig config;
  CpuEngine cpu;
  std::unique_ptr<KvCacheManager> kv;
  std::unique_ptr<Scheduler> scheduler;
  std::unique_ptr<cpu::CpuStepTimePredictor> predictor;  // slo policy only
  RealClock clock;
  std::unique_ptr<EngineService> engine;
};

namespace {

std::string ModelDir(const std::string& name_or_path) {
  namespace fs = std::filesystem;
  for (const auto& n : CatalogModelNames()) {
    if (n == name_or_path) return (fs::path(DataDir()) / "models" / n).string();
  }
  if (fs::is_directory(name_or_path)) return name_or_path;
  return fs::path(name_or_path).parent_path().string();
}

Result<std::unique_ptr<Tokenizer>> MakeTokenizer(const ServeConfig& c, const std::string& dir) {
  std::string path = c.tokenizer;
  if (path.empty() && !dir.empty() && std::filesystem::exists(dir + "/tokenizer.json")) path = dir + "/tokenizer.json";
  if (path.empty()) return std::unique_ptr<Tokenizer>(std::make_unique<ByteTokenizer>());
  GOODPUT_ASSIGN_OR_RETURN(auto bpe, BpeTokenizer::Load(path));
  return std::unique_ptr<Tokenizer>(std::move(bpe));
}

Result<cpu::ModelWeights> MakeWeights(const ServeConfig& c, const ModelSpec& m, const std::string& dir) {
  bool has_files = false;
  std::error_code ec;
  if (!dir.empty()) {
    for (const auto& e : std::filesystem::directory_iterator(dir, ec))
      has_files |= e.path().extension() == ".safetensors";
  }
  const std::string format = c.load_format == "auto" ? (has_files ? "safetensors" : "dummy") : c.load_format;
  if (format == "dummy") return cpu::DummyWeights(m, c.seed);
  if (format == "safetensors") return cpu::LoadSafetensorsWeights(m, dir);
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
Status SetSloStepTarget(const ServeConfig& c, SchedulerConfig& sc) {
  if (sc.policy != SchedulingPolicy::kSlo) return Status::Ok();
  if (!c.slo_tpot) return Status::InvalidArgument("--scheduling-policy slo needs --slo-tpot (e.g. 100ms)");
  if (*c.slo_tpot <= 0 || c.slo_headroom <= 0 || c.slo_headroom > 1) {
    return Status::InvalidArgument("--slo-tpot must be positive and --slo-headroom in (0, 1]");
  }
  sc.slo_step_target = *c.slo_tpot * c.slo_headroom;
  return Status::Ok();
}

// Measures this machine's step times for the slo policy's predictor.
Status FitStepTimes(Serving::Parts& s, double step_target, std::ostream& log) {
  log << "goodput serve: measuring step times for the slo policy ...\n" << std::flush;
  const CpuEngine& e = s.cpu;
  GOODPUT_ASSIGN_OR_RETURN(cpu::CpuStepCalibration cal,
                           cpu::CalibrateCpuSteps(*e.runner, e.layout.groups, e.num_blocks, e.config.cache.block_size,
                                                  s.clock));
  const cpu::CpuStepCoefficients& c = cal.fit;
  log << fmt::format(
      "goodput serve: step time = {:.2f} ms + {:.3f} ms per token + {:.2f} ns per attended KV token "
      "(measured: decode 1 = {:.1f} ms, decode {} = {:.1f} ms, prefill {} = {:.1f} ms); step target {:.1f} ms; "
      "predictions then follow the steps as they run\n",
      c.fixed_s * 1e3, c.per_token_s * 1e3, c.per_attended_s * 1e9, cal.decode1.seconds * 1e3, cpu::kCalibrationBatch,
      cal.decode_batch.seconds * 1e3, cpu::kCalibrationPrefill, cal.prefill.seconds * 1e3, step_target * 1e3);
  if (c.fixed_s >= step_target)
    log << "goodput serve: warning: a one-token step already takes longer than the step target\n";
  s.predictor = std::make_unique<cpu::CpuStepTimePredictor>(c);
  return Status::Ok();
}

// The model, its tokenizer and the engine settings resolved for the CPU.
Status LoadModelAndSettings(const ServeConfig& c, CpuEngine& e) {
  GOODPUT_ASSIGN_OR_RETURN(e.model, LoadModel(c.model));
  GOODPUT_RETURN_IF_ERROR(cpu::CheckCpuSupported(e.model));
  GOODPUT_RETURN_IF_ERROR(cpu::KernelIsaFromEnvironment().status());
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

Result<CpuEngine> LoadCpuEngineSettings(const ServeConfig& config) {
  CpuEngine e;
  GOODPUT_RETURN_IF_ERROR(LoadModelAndSettings(config, e));
  return e;
}

Result<CpuEngine> LoadCpuEngine(const ServeConfig& config) {
  GOODPUT_ASSIGN_OR_RETURN(CpuEngine e, LoadCpuEngineSettings(config));
  const SchedulerConfig& sc = e.config.scheduler;
  const CacheConfig& cache = e.config.cache;
  GOODPUT_ASSIGN_OR_RETURN(cpu::KvFormat format, cpu::KvFormatFor(cache.kv_cache_dtype, e.model.dtype));
  e.layout = cpu::MakeCpuKvLayout(e.model, cache.block_size);
  e.num_blocks = cpu::CpuKvBlocksFor(e.model, e.layout, format, cache.block_size, *cache.kv_cache_memory);
  e.capacity = CapacityForBlocks(e.layout.groups, e.num_blocks, sc.max_model_len, sc.max_num_batched_tokens);
  if (e.capacity.max_concurrency < 1) {
    return Status::InvalidArgument(fmt::format(
        "--kv-cache-memory {} holds {} blocks, less than one {}-token request needs; raise it or lower --max-model-len",
        FormatGiB(*cache.kv_cache_memory), e.num_blocks, sc.max_model_len));
  }
  GOODPUT_RETURN_IF_ERROR(CheckHostMemory(e.model, *cache.kv_cache_memory));
  GOODPUT_ASSIGN_OR_RETURN(cpu::ModelWeights weights, MakeWeights(config, e.model, ModelDir(config.model)));
  GOODPUT_ASSIGN_OR_RETURN(e.runner, cpu::CpuModelRunner::Create(e.model, std::move(weights), e.layout, format,
                                                                   e.num_blocks, cache.block_size));
  return e;
}

Result<std::unique_ptr<Serving>> Serving::Build(const ServeConfig& config, std::ostream& log) {
  auto parts = std::make_unique<Parts>();
  Parts& s = *parts;
  s.config = config;
  GOODPUT_ASSIGN_OR_RETURN(s.cpu, LoadCpuEngine(config));
  const SchedulerConfig& sc = s.cpu.config.scheduler;
  if (sc.policy == SchedulingPolicy::kSlo) GOODPUT_RETURN_IF_ERROR(FitStepTimes(s, sc.slo_step_target, log));
  s.kv = std::make_unique<KvCacheManager>(s.cpu.layout.groups, s.cpu.num_blocks,
                                          s.cpu.config.cache.enable_prefix_caching);
  s.scheduler = std::make_unique<Scheduler>(sc, s.kv.get(), s.predictor.get());
  s.engine = std::make_unique<EngineService>(s.scheduler.get(), s.kv.get(), s.cpu.runner.get(), &s.clock);
  StepObserver log_steps;
  if (!s.config.step_log.empty()) {
    // The observer owns the file: it lives as long as the engine whose thread writes it.
    GOODPUT_ASSIGN_OR_RETURN(log_steps, OpenStepLog(s.config.step_log));
  }
  // The slo policy's predictor learns from every step, on the engine thread that also schedules.
  cpu::CpuStepTimePredictor* learn = s.predictor.get();
  if (learn || log_steps) {
    s.engine->set_step_observer([learn, log_steps = std::move(log_steps)](const ObservedStep& step) {
      if (learn) learn->Observe(step.plan, step.end - step.start);
      if (log_steps) log_steps(step);
    });
  }
  log << KvCapacityLogLines(s.cpu.capacity, sc.max_model_len) << cpu::MatMulKernels() << "\n";
  return std::unique_ptr<Serving>(new Serving(std::move(parts)));
}

Serving::Serving(std::unique_ptr<Parts> parts) : parts_(std::move(parts)) {}

Serving::~Serving() {
  if (parts_ && parts_->engine) parts_->engine->Stop(false);
}

Status Serving::Run(std::ostream& log) {
  Parts& s = *parts_;
  boost::asio::io_context ioc;
  const ServedModel served{s.config.served_name.empty() ? s.cpu.model.name : s.config.served_name,
                           s.cpu.config.scheduler.max_model_len, s.cpu.tokenizer.get(), s.config.offline_classes};
  Server http(ioc, *s.engine, served, s.config.http);
  GOODPUT_RETURN_IF_ERROR(http.Listen());
  s.engine->Start();
  log << fmt::format("goodput serve: {} on http://{}:{}\n", served.name, s.config.http.host, http.port()) << std::flush;
  boost::asio::signal_set signals(ioc, SIGINT, SIGTERM);
  boost::asio::steady_timer grace(ioc);
  signals.async_wait([&](const boost::system::error_code& ec, int) {
    if (ec) return;
    log << "goodput serve: stopping\n";
    http.StopAccepting();
    s.engine->Stop(/*finish_inflight=*/false);  // in-flight requests get their final (aborted) chunks
    grace.expires_after(std::chrono::milliseconds(500));
    grace.async_wait([&](const boost::system::error_code&) { ioc.stop(); });
  });
  ioc.run();
  s.engine->Stop(false);
  return Status::Ok();
}

}  // namespace goodput::server
