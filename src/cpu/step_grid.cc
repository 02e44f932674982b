#include "cpu/step_grid.h"

#include <algorithm>

#include <fmt/format.h>

#include "cpu/small_matmul.h"
#include "engine/kv_cache_manager.h"
#include "engine/scheduler.h"

namespace goodput::cpu {

Request StepTimingRequest(RequestId id, int64_t prompt, int64_t max_tokens) {
  Request r;
  r.id = id;
  r.num_prompt_tokens = prompt;
  for (int64_t t = 0; t < prompt; ++t) r.token_ids.push_back(static_cast<int32_t>(3 + (t * 31 + id) % 200));
  r.sampling.max_tokens = max_tokens;
  r.sampling.ignore_eos = true;
  return r;
}

namespace {

// The most rows this CPU's own small-matmul kernel takes (0: none), where
// the matmul rate jumps.
int64_t SmallKernelRows() {
  int64_t rows = 0;
  for (int64_t m = 1; m <= 256; ++m) rows = SmallMatMulHandles(m) ? m : rows;
  return rows;
}

// Runs one scheduled step; returns what it computed and how long it took.
MeasuredStep TimedStep(Scheduler& s, ModelRunner& runner, const Clock& clock) {
  const StepPlan& plan = s.Schedule();
  MeasuredStep out;
  for (const ScheduledRequest& r : plan.requests) out.requests.push_back({r.num_computed, r.num_new, r.samples});
  const double t0 = clock.Now();
  const StepResult result = runner.Execute(plan);
  out.seconds = clock.Now() - t0;
  s.Update(plan, result);
  return out;
}

MeasuredStep Median(std::vector<MeasuredStep> steps, std::string shape) {
  std::sort(steps.begin(), steps.end(), [](const auto& a, const auto& b) { return a.seconds < b.seconds; });
  MeasuredStep m = steps[(steps.size() - 1) / 2];  // the lower median: noise only slows steps down
  m.shape = std::move(shape);
  return m;
}

class Runner {
 public:
  Runner(ModelRunner& runner, const std::vector<KvGroupSpec>& groups, int64_t num_blocks, int64_t max_model_len,
         const Clock& clock)
      : runner_(runner), kv_(groups, num_blocks), sched_(Config(max_model_len), &kv_, nullptr), clock_(clock) {}

  // The median of `repeats` decode steps of `batch` requests at `context` tokens.
  Result<MeasuredStep> Decode(int64_t batch, int64_t context, int repeats) {
    for (int64_t i = 0; i < batch; ++i) {
      if (sched_.Add(StepTimingRequest(next_id_++, context, repeats + 2)))
        return Status::FailedPrecondition("rejected");
    }
    std::vector<MeasuredStep> steps;
    while (sched_.HasWork()) {
      MeasuredStep step = TimedStep(sched_, runner_, clock_);
      const bool whole_decode = static_cast<int64_t>(step.requests.size()) == batch &&
                                std::all_of(step.requests.begin(), step.requests.end(),
                                            [](const StepRequest& r) { return r.num_new == 1; });
      if (whole_decode) steps.push_back(std::move(step));
    }
    if (steps.empty()) return Status::FailedPrecondition("no decode step of the whole batch ran");
    return Median(std::move(steps), fmt::format("decode {} x ctx {}", batch, context));
  }

  // The median of `repeats` one-step prefills of `tokens` tokens.
  Result<MeasuredStep> Prefill(int64_t tokens, int repeats) {
    std::vector<MeasuredStep> steps;
    for (int i = 0; i < repeats; ++i) {
      if (sched_.Add(StepTimingRequest(next_id_++, tokens, 1))) return Status::FailedPrecondition("rejected");
      steps.push_back(TimedStep(sched_, runner_, clock_));
      while (sched_.HasWork()) TimedStep(sched_, runner_, clock_);
    }
    return Median(std::move(steps), fmt::format("prefill {}", tokens));
  }

  bool Fits(int64_t batch, int64_t context) const {
    return context + 8 < sched_.config().max_model_len &&
           batch * kv_.PeakBlocks(context + 8, context) <= kv_.num_blocks();
  }

 private:
  static SchedulerConfig Config(int64_t max_model_len) {
    SchedulerConfig c;
    c.max_num_batched_tokens = 1 << 20;  // a shape's prefill runs in one step
    c.max_num_seqs = 1024;
    c.max_model_len = max_model_len;
    return c;
  }

  ModelRunner& runner_;
  KvCacheManager kv_;
  Scheduler sched_;
  const Clock& clock_;
  RequestId next_id_ = 1;
};

}  // namespace

StepGrid StartupStepGrid() {
  StepGrid g;
  g.decode_context = 4;  // the decodes inform the matmul rate; the long decodes, attention
  const int64_t kernel = SmallKernelRows();  // 0 on a CPU without the kernel: 0 is dropped, 1 a duplicate
  std::vector<int64_t>& b = g.decode_batches;
  b = {1, 2, 4, kernel, kernel + 1, 16, 32};
  std::sort(b.begin(), b.end());
  b.erase(std::unique(b.begin(), b.end()), b.end());
  b.erase(std::remove(b.begin(), b.end(), 0), b.end());
  g.long_decodes = {{1, 512}, {2, 256}};
  g.prefills = {16, 64, 256};
  g.rounds = 1;
  return g;
}

StepFitKnots StartupKnots() {
  StepFitKnots k;
  k.attention = {1, 16, 256};
  k.matmul = {1};
  if (const int64_t rows = SmallKernelRows(); rows > 1) {
    k.matmul.push_back(static_cast<double>(rows));
    k.matmul.push_back(static_cast<double>(rows + 1));
  }
  k.matmul.push_back(256);
  return k;
}

Result<std::vector<MeasuredStep>> MeasureSteps(ModelRunner& runner, const std::vector<KvGroupSpec>& groups,
                                               int64_t num_blocks, int64_t max_model_len, const StepGrid& grid,
                                               const Clock& clock,
                                               const std::function<void(const std::string&)>& progress) {
  Runner r(runner, groups, num_blocks, max_model_len, clock);
  if (!r.Fits(8, grid.decode_context)) {
    return Status::InvalidArgument(
        fmt::format("the KV pool ({} blocks) is too small to measure step times", num_blocks));
  }
  // Warm-up: first-touch page faults and idle helper threads would land in the first steps.
  GOODPUT_RETURN_IF_ERROR(r.Decode(8, grid.decode_context, 2).status());
  std::vector<std::vector<MeasuredStep>> samples;  // per shape, over the rounds
  for (int round = 0; round < std::max(1, grid.rounds); ++round) {
    size_t shape = 0;
    const auto add = [&](Result<MeasuredStep> step) -> Status {
      if (!step.ok()) return step.status().WithContext("step calibration");
      if (progress) progress(fmt::format("{} (round {})", step->shape, round + 1));
      if (samples.size() <= shape) samples.emplace_back();
      samples[shape++].push_back(std::move(*step));
      return Status::Ok();
    };
    for (int64_t b : grid.decode_batches) {
      if (r.Fits(b, grid.decode_context)) GOODPUT_RETURN_IF_ERROR(add(r.Decode(b, grid.decode_context, grid.repeats)));
    }
    for (const auto& [b, ctx] : grid.long_decodes) {
      if (r.Fits(b, ctx)) GOODPUT_RETURN_IF_ERROR(add(r.Decode(b, ctx, grid.repeats)));
    }
    for (int64_t t : grid.prefills) {
      if (r.Fits(1, t)) GOODPUT_RETURN_IF_ERROR(add(r.Prefill(t, grid.repeats)));
    }
  }
  std::vector<MeasuredStep> out;
  for (auto& rounds : samples) {
    const std::string shape = rounds.front().shape;
    out.push_back(Median(std::move(rounds), shape));
  }
  return out;
}

}  // namespace goodput::cpu
