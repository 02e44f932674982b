#include "cli/serve_command.h"

#include "cli/engine_flags.h"

#include <filesystem>
#include <iostream>
#include <memory>

#include <boost/asio.hpp>
#include <fmt/format.h>

#include "core/clock.h"
#include "core/data_dir.h"
#include "core/units.h"
#include "cpu/cpu_runner.h"
#include "cpu/step_time.h"
#include "cpu/tokenizer.h"
#include "engine/engine_service.h"
#include "model/catalog.h"
#include "engine/kv_groups.h"
#include "server/http_server.h"

namespace goodput {
namespace {

struct ServeArgs {
  EngineArgs engine;
  std::string model, load_format = "auto", tokenizer, slo_tpot, host = "127.0.0.1", api_key, served_name;
  std::vector<std::string> offline_classes = {"offline"};
  uint64_t seed = 0;
  double slo_headroom = 0.9;
  int port = 8000;
  int timeout_keep_alive = 5;
  int timeout_write = 30;
};

void AddServeFlags(CLI::App& c, ServeArgs& a) {
  c.add_option("--model,-m", a.model, "Preset or catalog name (goodput-small, goodput-tiny, ...) or a model directory")
      ->required();
  c.add_option("--load-format", a.load_format, "auto (safetensors when the directory has them) | dummy | safetensors")
      ->capture_default_str();
  c.add_option("--seed", a.seed, "Seed of the dummy weights")->capture_default_str();
  c.add_option("--tokenizer", a.tokenizer, "tokenizer.json (default: the model directory's, else the byte tokenizer)");
  AddEngineFlags(c, a.engine, kEngineSizeFlags | kEngineSchedulingFlags);
  c.add_option("--slo-tpot", a.slo_tpot,
               "slo policy: the interactive TPOT target (e.g. 100ms); offline work enters a step only while the "
               "step's predicted time stays within it");
  c.add_option("--slo-headroom", a.slo_headroom, "slo policy: share of the TPOT target a step may take")
      ->capture_default_str();
  c.add_option("--offline-classes", a.offline_classes, "Request classes scheduled as offline")->capture_default_str();
  c.add_option("--host", a.host, "Address to listen on")->capture_default_str();
  c.add_option("--port", a.port, "Port (0: any free port, printed at start)")->capture_default_str();
  c.add_option("--api-key", a.api_key, "Require 'Authorization: Bearer KEY'");
  c.add_option("--timeout-keep-alive", a.timeout_keep_alive, "Seconds an idle connection stays open (as vLLM's)")
      ->capture_default_str();
  c.add_option("--timeout-write", a.timeout_write,
               "Seconds a client may take to accept a response or stream chunk before it is dropped and its request "
               "aborted")
      ->capture_default_str();
  c.add_option("--served-model-name", a.served_name, "Model name in the API (default: the model's)");
}

Result<std::unique_ptr<cpu::Tokenizer>> MakeTokenizer(const ServeArgs& a, const std::string& dir) {
  std::string path = a.tokenizer;
  if (path.empty() && !dir.empty() && std::filesystem::exists(dir + "/tokenizer.json")) path = dir + "/tokenizer.json";
  if (path.empty()) return std::unique_ptr<cpu::Tokenizer>(std::make_unique<cpu::ByteTokenizer>());
  GOODPUT_ASSIGN_OR_RETURN(auto bpe, cpu::BpeTokenizer::Load(path));
  return std::unique_ptr<cpu::Tokenizer>(std::move(bpe));
}

Result<cpu::ModelWeights> MakeWeights(const ServeArgs& a, const ModelSpec& m, const std::string& dir) {
  bool has_files = false;
  std::error_code ec;
  if (!dir.empty()) {
    for (const auto& e : std::filesystem::directory_iterator(dir, ec)) has_files |= e.path().extension() == ".safetensors";
  }
  const std::string format = a.load_format == "auto" ? (has_files ? "safetensors" : "dummy") : a.load_format;
  if (format == "dummy") return cpu::DummyWeights(m, a.seed);
  if (format == "safetensors") return cpu::LoadSafetensorsWeights(m, dir);
  return Status::InvalidArgument(fmt::format("--load-format '{}': use auto, dummy or safetensors", a.load_format));
}

std::string ModelDir(const std::string& name_or_path) {
  namespace fs = std::filesystem;
  for (const auto& n : CatalogModelNames()) {
    if (n == name_or_path) return (fs::path(DataDir()) / "models" / n).string();
  }
  if (fs::is_directory(name_or_path)) return name_or_path;
  return fs::path(name_or_path).parent_path().string();
}

// Everything `serve` runs, built before anything listens.
struct Serving {
  ModelSpec model;
  std::unique_ptr<cpu::Tokenizer> tokenizer;
  cpu::CpuKvLayout layout;
  int64_t num_blocks = 0;
  std::unique_ptr<KvCacheManager> kv;
  std::unique_ptr<Scheduler> scheduler;
  std::unique_ptr<cpu::CpuModelRunner> runner;
  std::unique_ptr<cpu::CpuStepTimePredictor> predictor;  // slo policy only
  RealClock clock;
  std::unique_ptr<EngineService> engine;
};

// Measures this machine's step times for the slo policy's predictor.
Status Calibrate(Serving& s, int64_t block_size, double step_target) {
  std::cerr << "goodput serve: measuring step times for the slo policy ...\n" << std::flush;
  GOODPUT_ASSIGN_OR_RETURN(cpu::CpuStepCalibration cal,
                           cpu::CalibrateCpuSteps(*s.runner, s.layout.groups, s.num_blocks, block_size, s.clock));
  const cpu::CpuStepCoefficients& c = cal.fit;
  std::cerr << fmt::format(
      "goodput serve: step time = {:.2f} ms + {:.3f} ms per token + {:.2f} ns per attended KV token "
      "(measured: decode 1 = {:.1f} ms, decode {} = {:.1f} ms, prefill {} = {:.1f} ms); step target {:.1f} ms\n",
      c.fixed_s * 1e3, c.per_token_s * 1e3, c.per_attended_s * 1e9, cal.decode1.seconds * 1e3, cpu::kCalibrationBatch,
      cal.decode_batch.seconds * 1e3, cpu::kCalibrationPrefill, cal.prefill.seconds * 1e3, step_target * 1e3);
  if (c.fixed_s >= step_target) {
    std::cerr << "goodput serve: warning: a one-token step already takes longer than the step target\n";
  }
  s.predictor = std::make_unique<cpu::CpuStepTimePredictor>(c);
  return Status::Ok();
}

Status Build(const ServeArgs& a, Serving& s) {
  GOODPUT_ASSIGN_OR_RETURN(s.model, LoadModel(a.model));
  GOODPUT_RETURN_IF_ERROR(cpu::CheckCpuSupported(s.model));
  const std::string dir = ModelDir(a.model);
  GOODPUT_ASSIGN_OR_RETURN(s.tokenizer, MakeTokenizer(a, dir));
  if (s.tokenizer->vocab_size() > s.model.vocab_size) {
    return Status::InvalidArgument(fmt::format("the tokenizer has {} tokens but the model only {}",
                                               s.tokenizer->vocab_size(), s.model.vocab_size));
  }
  GOODPUT_ASSIGN_OR_RETURN(EngineConfig config, ToEngineConfig(a.engine));
  ResolveEngineDefaults(config, EngineDevice::kCpu, s.model.max_position_embeddings);
  GOODPUT_ASSIGN_OR_RETURN(cpu::KvFormat format, cpu::KvFormatFor(config.cache.kv_cache_dtype, s.model.dtype));
  SchedulerConfig& sc = config.scheduler;
  if (sc.policy == SchedulingPolicy::kSlo) {
    if (a.slo_tpot.empty()) return Status::InvalidArgument("--scheduling-policy slo needs --slo-tpot (e.g. 100ms)");
    auto tpot = ParseDuration(a.slo_tpot);
    if (!tpot.ok()) return tpot.status().WithContext("--slo-tpot");
    if (*tpot <= 0 || a.slo_headroom <= 0 || a.slo_headroom > 1) {
      return Status::InvalidArgument("--slo-tpot must be positive and --slo-headroom in (0, 1]");
    }
    sc.slo_step_target = *tpot * a.slo_headroom;
  }
  sc.eos_token_id = s.model.eos_token_ids.empty() ? s.tokenizer->eos_id() : s.model.eos_token_ids.front();
  const int64_t block_size = config.cache.block_size;
  s.layout = cpu::MakeCpuKvLayout(s.model, block_size);
  s.num_blocks = cpu::CpuKvBlocksFor(s.model, s.layout, format, block_size, *config.cache.kv_cache_memory);
  const KvCapacity capacity =
      CapacityForBlocks(s.layout.groups, s.num_blocks, sc.max_model_len, sc.max_num_batched_tokens);
  if (capacity.max_concurrency < 1) {
    return Status::InvalidArgument(fmt::format(
        "--kv-cache-memory {} holds {} blocks, less than one {}-token request needs; raise it or lower --max-model-len",
        FormatGiB(*config.cache.kv_cache_memory), s.num_blocks, sc.max_model_len));
  }
  GOODPUT_ASSIGN_OR_RETURN(cpu::ModelWeights weights, MakeWeights(a, s.model, dir));
  GOODPUT_ASSIGN_OR_RETURN(s.runner, cpu::CpuModelRunner::Create(s.model, std::move(weights), s.layout, format,
                                                                   s.num_blocks, block_size));
  if (sc.policy == SchedulingPolicy::kSlo) GOODPUT_RETURN_IF_ERROR(Calibrate(s, block_size, sc.slo_step_target));
  s.kv = std::make_unique<KvCacheManager>(s.layout.groups, s.num_blocks);
  s.scheduler = std::make_unique<Scheduler>(sc, s.kv.get(), s.predictor.get());
  s.engine = std::make_unique<EngineService>(s.scheduler.get(), s.kv.get(), s.runner.get(), &s.clock);
  std::cerr << KvCapacityLogLines(capacity, sc.max_model_len);
  return Status::Ok();
}

int RunServe(const ServeArgs& a) {
  Serving s;
  if (Status st = Build(a, s); !st.ok()) throw CLI::RuntimeError("goodput serve: " + st.message(), 2);
  if (a.port < 0 || a.port > 65535) throw CLI::RuntimeError("goodput serve: --port must be 0..65535", 2);
  boost::asio::io_context ioc;
  server::ServedModel served{a.served_name.empty() ? s.model.name : a.served_name, s.scheduler->config().max_model_len,
                             s.tokenizer.get(), a.offline_classes};
  server::ServerOptions options;
  options.host = a.host;
  options.port = static_cast<uint16_t>(a.port);
  options.api_key = a.api_key;
  if (a.timeout_keep_alive < 1) throw CLI::RuntimeError("goodput serve: --timeout-keep-alive must be at least 1", 2);
  options.idle_timeout_s = a.timeout_keep_alive;
  if (a.timeout_write < 1) throw CLI::RuntimeError("goodput serve: --timeout-write must be at least 1", 2);
  options.write_timeout_s = a.timeout_write;
  server::Server http(ioc, *s.engine, served, options);
  if (Status st = http.Listen(); !st.ok()) throw CLI::RuntimeError("goodput serve: " + st.message(), 2);
  s.engine->Start();
  std::cerr << fmt::format("goodput serve: {} on http://{}:{}\n", served.name, a.host, http.port()) << std::flush;
  boost::asio::signal_set signals(ioc, SIGINT, SIGTERM);
  boost::asio::steady_timer grace(ioc);
  signals.async_wait([&](const boost::system::error_code& ec, int) {
    if (ec) return;
    std::cerr << "goodput serve: stopping\n";
    http.StopAccepting();
    s.engine->Stop(/*finish_inflight=*/false);  // in-flight requests get their final (aborted) chunks
    grace.expires_after(std::chrono::milliseconds(500));
    grace.async_wait([&](const boost::system::error_code&) { ioc.stop(); });
  });
  ioc.run();
  s.engine->Stop(false);
  return 0;
}

}  // namespace

void AddServeCommand(CLI::App& app) {
  auto args = std::make_shared<ServeArgs>();
  CLI::App* c = app.add_subcommand("serve", "Serve a CPU transformer behind an OpenAI-compatible API (completions, chat, SSE)");
  AddServeFlags(*c, *args);
  c->callback([args]() {
    const int rc = RunServe(*args);
    if (rc != 0) throw CLI::RuntimeError(rc);
  });
}

}  // namespace goodput
