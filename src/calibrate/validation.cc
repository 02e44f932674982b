#include "calibrate/validation.h"

#include <unistd.h>

#include <cmath>
#include <filesystem>

#include <fmt/format.h>

#include "calibrate/engine_calibration.h"
#include "client/server_process.h"
#include "measure/point_report.h"
#include "model/catalog.h"
#include "sim/sim_target.h"

namespace goodput {
namespace {

// goodput serve's flags for `e` (sizes as plain numbers: exact).
std::vector<std::string> ServeArgs(const EngineConfig& e) {
  std::vector<std::string> args = {"--kv-cache-dtype", e.cache.kv_cache_dtype,
                                   "--scheduling-policy", SchedulingPolicyName(e.scheduler.policy)};
  const auto add = [&](const char* flag, int64_t v) {
    if (v > 0) args.insert(args.end(), {flag, std::to_string(v)});
  };
  add("--max-num-seqs", e.scheduler.max_num_seqs);
  add("--max-num-batched-tokens", e.scheduler.max_num_batched_tokens);
  add("--max-model-len", e.scheduler.max_model_len);
  add("--block-size", e.cache.block_size);
  add("--long-prefill-token-threshold", e.scheduler.long_prefill_token_threshold);
  if (e.cache.kv_cache_memory) add("--kv-cache-memory", *e.cache.kv_cache_memory);
  return args;
}

Result<std::unique_ptr<Target>> SimTargetFor(const server::ServeConfig& config, const Calibration& calibration) {
  GOODPUT_ASSIGN_OR_RETURN(ModelSpec model, LoadModel(config.model));
  EngineConfig engine = config.engine;
  ResolveEngineDefaults(engine, EngineDevice::kCpu, model.max_position_embeddings);
  GOODPUT_ASSIGN_OR_RETURN(SimSetup setup, SetupCalibratedSimulation(model, PlanOptionsFor(calibration, engine), calibration));
  return std::unique_ptr<Target>(std::make_unique<SimTarget>(std::move(setup), "sim (calibrated)"));
}

int StepsApart(const std::vector<Comparison::Row>& rows, const std::optional<std::string>& a,
               const std::optional<std::string>& b) {
  const auto index = [&](const std::optional<std::string>& label) {
    if (!label) return -1;
    for (size_t i = 0; i < rows.size(); ++i) {
      if (rows[i].serve.label == *label) return static_cast<int>(i);
    }
    return -1;
  };
  return std::abs(index(a) - index(b));
}

std::string Pct(double sim, double serve) {
  if (!std::isfinite(sim) || !std::isfinite(serve) || serve == 0) return "-";
  return fmt::format("{:+.0f}%", 100 * (sim / serve - 1));
}

// `spec` as a plain ladder on goodput serve with `config`'s engine (and
// `extra` flags).
Result<SweepResult> MeasureOnServe(const std::string& binary, const server::ServeConfig& config, const MeasurementSpec& spec,
                                   const std::vector<std::string>& extra, const MeasurementHooks& hooks) {
  MeasurementSpec ladder = spec;
  ladder.search_capacity = false;
  ladder.vary.reset();
  EngineConfig engine = config.engine;
  GOODPUT_ASSIGN_OR_RETURN(ModelSpec model, LoadModel(config.model));
  ResolveEngineDefaults(engine, EngineDevice::kCpu, model.max_position_embeddings);
  std::vector<std::string> serve_args = ServeArgs(engine);
  serve_args.insert(serve_args.end(), extra.begin(), extra.end());
  auto serve = Measure(
      ladder,
      [&](const Setting&) -> Result<std::unique_ptr<Target>> {
        GOODPUT_ASSIGN_OR_RETURN(auto t, EmbeddedTarget::Start(binary, config.model, serve_args, {}));
        return std::unique_ptr<Target>(std::move(t));
      },
      hooks);
  if (!serve.ok()) return serve.status().WithContext("goodput serve");
  return serve->front().sweep;
}

}  // namespace

Result<Calibration> CalibrateFromServeRuns(const std::string& goodput_binary, const std::vector<ServeRun>& runs,
                                           const std::function<void(const std::string&)>& progress) {
  if (runs.empty()) return Status::InvalidArgument("no calibration run");
  MeasurementHooks hooks;
  hooks.progress = progress;
  std::vector<std::string> logs;
  const auto removed = [&](Result<Calibration> r) {
    for (const std::string& log : logs) std::filesystem::remove(log);
    return r;
  };
  for (size_t i = 0; i < runs.size(); ++i) {
    logs.push_back((std::filesystem::temp_directory_path() / fmt::format("goodput-steps-{}-{}.log", getpid(), i)).string());
    auto measured = MeasureOnServe(goodput_binary, runs[i].config, runs[i].spec, {"--step-log", logs.back()}, hooks);
    if (!measured.ok()) return removed(measured.status().WithContext("calibration run"));
  }
  return removed(CalibrateFromStepLogs(runs.front().config, logs));
}

Result<Comparison> CompareSimToServe(const std::string& goodput_binary, const server::ServeConfig& config,
                                     const Calibration& calibration, const MeasurementSpec& spec,
                                     const std::function<void(const std::string&)>& progress) {
  MeasurementSpec ladder = spec;
  ladder.search_capacity = false;
  ladder.vary.reset();
  MeasurementHooks hooks;
  hooks.progress = progress;
  auto serve = MeasureOnServe(goodput_binary, config, ladder, {}, hooks);
  if (!serve.ok()) return serve.status();
  auto sim = Measure(ladder, [&](const Setting&) { return SimTargetFor(config, calibration); }, hooks);
  if (!sim.ok()) return sim.status().WithContext("simulator");
  Comparison c;
  c.workload = spec.workload.name;
  const SweepResult& a = *serve;
  const SweepResult& b = sim->front().sweep;
  for (size_t i = 0; i < a.points.size() && i < b.points.size(); ++i) c.rows.push_back({a.points[i], b.points[i]});
  if (a.capacity) c.serve_capacity = a.points[*a.capacity].label;
  if (b.capacity) c.sim_capacity = b.points[*b.capacity].label;
  c.capacity_steps_apart = StepsApart(c.rows, c.serve_capacity, c.sim_capacity);
  c.serve_capacity_why = FormatCapacity(a.points, a.capacity, a.capped);
  c.sim_capacity_why = FormatCapacity(b.points, b.capacity, b.capped);
  return c;
}

std::string FormatComparison(const Comparison& c) {
  std::string s = fmt::format("workload {}: goodput serve (real HTTP) vs the simulator calibrated from its steps\n",
                              c.workload);
  // serve's own spread (max - min over its repeats, of the median) is the
  // noise floor the simulator's errors are read against.
  s += fmt::format("{:>6} {:>26} {:>26} {:>26} {:>26} {:>24} {:>13} {:>18}\n", "load", "TTFT p50 serve/sim/err",
                   "TTFT p99 serve/sim/err", "TPOT p50 serve/sim/err", "TPOT p99 serve/sim/err",
                   "throughput serve/sim/err", "serve spread", "preempt serve/sim");
  const auto ms = [](double x) { return std::isfinite(x) ? fmt::format("{:.1f}", x * 1e3) : std::string("-"); };
  const auto count = [](double x) { return std::isfinite(x) ? fmt::format("{:.0f}", x) : std::string("-"); };
  const auto cell = [&](double a, double b) { return fmt::format("{}/{} {}", ms(a), ms(b), Pct(b, a)); };
  for (const auto& r : c.rows) {
    s += fmt::format("{:>6} {:>26} {:>26} {:>26} {:>26} {:>24} {:>12.1f}% {:>18}\n", r.serve.label,
                     cell(r.serve.ttft.p50, r.sim.ttft.p50), cell(r.serve.ttft.p99, r.sim.ttft.p99),
                     cell(r.serve.tpot.p50, r.sim.tpot.p50), cell(r.serve.tpot.p99, r.sim.tpot.p99),
                     fmt::format("{:.0f}/{:.0f} {}", r.serve.throughput, r.sim.throughput,
                                 Pct(r.sim.throughput, r.serve.throughput)),
                     100 * r.serve.throughput_spread,
                     fmt::format("{}/{}", count(r.serve.preemptions), count(r.sim.preemptions)));
  }
  s += fmt::format("capacity: serve {}, sim {} ({} ladder step{} apart)\n", c.serve_capacity.value_or("none"),
                   c.sim_capacity.value_or("none"), c.capacity_steps_apart, c.capacity_steps_apart == 1 ? "" : "s");
  if (c.serve_capacity != c.sim_capacity) s += "goodput serve's " + c.serve_capacity_why + "the simulator's " + c.sim_capacity_why;
  // Failed requests count against attainment but not in the latencies: say so.
  for (const auto& r : c.rows) {
    if (!r.serve.top_error.empty()) s += fmt::format("load {}: goodput serve failed {}\n", r.serve.label, r.serve.top_error);
    if (!r.sim.top_error.empty()) s += fmt::format("load {}: the simulator failed {}\n", r.sim.label, r.sim.top_error);
  }
  return s;
}

}  // namespace goodput
