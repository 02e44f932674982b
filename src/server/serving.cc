#include "server/serving.h"

#include <ostream>

#include <boost/asio.hpp>
#include <fmt/format.h>

#include "core/clock.h"
#include "cpu/kernels.h"
#include "cpu/step_fit.h"
#include "cpu/step_grid.h"
#include "engine/engine_service.h"
#include "engine/kv_groups.h"
#include "engine/step_log.h"
#include "engine/step_time_predictor.h"

namespace goodput::server {

struct Serving::Parts {
  ServeConfig config;
  cpu::CpuEngine cpu;
  std::unique_ptr<KvCacheManager> kv;
  std::unique_ptr<Scheduler> scheduler;
  std::unique_ptr<CostModel> step_prior;                 // slo policy only
  std::unique_ptr<AdaptiveStepTimePredictor> predictor;  // slo policy only
  RealClock clock;
  std::unique_ptr<EngineService> engine;
};

namespace {

// The prior's step time for `batch` decodes at `context` tokens, or one prefill of `tokens` (batch 0).
double PriorSeconds(const CostModel& prior, int64_t batch, int64_t context, int64_t tokens = 0) {
  CostModel::Step step;
  for (int64_t i = 0; i < batch; ++i) prior.Add(step, context, 1, true);
  if (batch == 0) prior.Add(step, 0, tokens, true);
  return prior.Seconds(step);
}

// The slo policy's prior: the cost model fitted to this machine's steps,
// measured now (goodput calibrate steps' fit on a smaller grid) unless the
// config carries factors goodput calibrate steps fitted for this model.
Result<std::string> FitStepPrior(Serving::Parts& s) {
  const cpu::CpuEngine& e = s.cpu;
  GOODPUT_ASSIGN_OR_RETURN(const DeployedModel deployed, cpu::DeployedCpuModel(e));
  if (const auto& given = s.config.step_factors) {
    if (s.config.step_factors_model != e.model.name) {
      return Status::InvalidArgument(fmt::format("{} was fitted for {}, not {}: goodput calibrate steps --model {}",
                                                 s.config.step_factors_from, s.config.step_factors_model, e.model.name,
                                                 e.model.name));
    }
    s.step_prior = std::make_unique<CostModel>(deployed, *given);
    return fmt::format("from {}", s.config.step_factors_from);
  }
  GOODPUT_ASSIGN_OR_RETURN(const std::vector<cpu::MeasuredStep> steps,
                           cpu::MeasureSteps(*e.runner, e.layout.groups, e.num_blocks, e.config.scheduler.max_model_len,
                                             cpu::StartupStepGrid(), s.clock));
  Result<cpu::StepFit> fitted = cpu::FitSteps(deployed, steps, cpu::StartupKnots());
  if (!fitted.ok()) {
    return Status::FailedPrecondition(fitted.status().message() +
                                      ", and the KV pool and max model length leave the slo policy's start-up grid "
                                      "fewer shapes: give a larger pool, or --step-calibration FILE from goodput "
                                      "calibrate steps");
  }
  const cpu::StepFit& fit = *fitted;
  s.step_prior = std::make_unique<CostModel>(deployed, fit.factors);
  return fmt::format("fitted to {} measured shapes (rms log error {:.3f})", fit.measurements, fit.rms_log_error);
}

Status SetUpStepPredictor(Serving::Parts& s, double step_target, std::ostream& log) {
  if (!s.config.step_factors) log << "goodput serve: measuring step times for the slo policy ...\n" << std::flush;
  GOODPUT_ASSIGN_OR_RETURN(const std::string how, FitStepPrior(s));
  const CostModel& prior = *s.step_prior;
  log << fmt::format(
      "goodput serve: step time {}: decode 1 = {:.3g} ms, decode 16 = {:.3g} ms, decode 16 at 1,024 tokens = "
      "{:.3g} ms, prefill 256 = {:.3g} ms; step target {:.1f} ms; predictions then follow the steps as they run\n",
      how, PriorSeconds(prior, 1, 16) * 1e3, PriorSeconds(prior, 16, 16) * 1e3, PriorSeconds(prior, 16, 1024) * 1e3,
      PriorSeconds(prior, 0, 0, 256) * 1e3, step_target * 1e3);
  if (PriorSeconds(prior, 1, 16) >= step_target)
    log << "goodput serve: warning: a one-token step already takes longer than the step target\n";
  s.predictor = std::make_unique<AdaptiveStepTimePredictor>(s.step_prior.get());
  return Status::Ok();
}

}  // namespace

Result<std::unique_ptr<Serving>> Serving::Build(const ServeConfig& config, std::ostream& log) {
  auto parts = std::make_unique<Parts>();
  Parts& s = *parts;
  s.config = config;
  GOODPUT_ASSIGN_OR_RETURN(s.cpu, cpu::LoadCpuEngine(config));
  const SchedulerConfig& sc = s.cpu.config.scheduler;
  if (sc.policy == SchedulingPolicy::kSlo) GOODPUT_RETURN_IF_ERROR(SetUpStepPredictor(s, sc.slo_step_target, log));
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
  AdaptiveStepTimePredictor* learn = s.predictor.get();
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
