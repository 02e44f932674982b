#include "cpu/step_time.h"

#include <algorithm>
#include <cmath>


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

// The KV entries `num_new` new tokens after `num_computed` read (the line's third term).
double Attended(int64_t num_computed, int64_t num_new) {
  return static_cast<double>(num_new) * (static_cast<double>(num_computed) + num_new / 2.0);
}

double Attended(const StepPlan& plan) {
  double attended = 0;
  for (const auto& r : plan.requests) attended += Attended(r.num_computed, r.num_new);
  return attended;
}

StepSample TimedStep(Scheduler& s, ModelRunner& runner, const Clock& clock) {
  const StepPlan& plan = s.Schedule();
  StepSample out{static_cast<double>(plan.num_batched_tokens), Attended(plan), 0};
  const double t0 = clock.Now();
  const StepResult result = runner.Execute(plan);
  out.seconds = clock.Now() - t0;
  s.Update(plan, result);
  return out;
}

StepSample MedianStep(std::vector<StepSample> steps) {
  std::sort(steps.begin(), steps.end(), [](const StepSample& a, const StepSample& b) { return a.seconds < b.seconds; });
  return steps[steps.size() / 2];
}

// The median decode step of `batch` short requests (their prefill step is not counted).
Result<StepSample> MedianDecodeStep(Scheduler& s, ModelRunner& runner, const Clock& clock, int64_t batch,
                                    RequestId& next_id) {
  constexpr int64_t kSteps = 7;
  for (int64_t i = 0; i < batch; ++i) {
    if (s.Add(StepTimingRequest(next_id++, 16, kSteps + 1)))
      return Status::FailedPrecondition("calibration request rejected");
  }
  TimedStep(s, runner, clock);
  std::vector<StepSample> steps;
  while (s.HasWork()) {
    const StepSample step = TimedStep(s, runner, clock);
    if (step.tokens == static_cast<double>(batch)) steps.push_back(step);
  }
  if (steps.empty()) return Status::FailedPrecondition("calibration: no decode step of the whole batch ran");
  return MedianStep(std::move(steps));
}

Result<StepSample> MedianPrefillStep(Scheduler& s, ModelRunner& runner, const Clock& clock, RequestId& next_id) {
  std::vector<StepSample> steps;
  for (int rep = 0; rep < 3; ++rep) {
    if (s.Add(StepTimingRequest(next_id++, kCalibrationPrefill, 1))) {
      return Status::FailedPrecondition("calibration request rejected");
    }
    steps.push_back(TimedStep(s, runner, clock));
    while (s.HasWork()) TimedStep(s, runner, clock);
  }
  return MedianStep(std::move(steps));
}

double Det3(const double m[3][3]) {
  return m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1]) - m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0]) +
         m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0]);
}

}  // namespace

CpuStepCoefficients FitCpuStepCoefficients(const StepSample& decode1, const StepSample& decode_batch,
                                           const StepSample& prefill) {
  // Cramer's rule on [1 tokens attended] * [fixed per_token per_attended]^T = seconds.
  const StepSample* rows[3] = {&decode1, &decode_batch, &prefill};
  double a[3][3];
  for (int i = 0; i < 3; ++i) {
    a[i][0] = 1;
    a[i][1] = rows[i]->tokens;
    a[i][2] = rows[i]->attended;
  }
  const double det = Det3(a);
  double x[3] = {decode1.seconds, 0, 0};
  if (det != 0) {
    for (int col = 0; col < 3; ++col) {
      double m[3][3];
      for (int i = 0; i < 3; ++i) {
        for (int j = 0; j < 3; ++j) m[i][j] = j == col ? rows[i]->seconds : a[i][j];
      }
      x[col] = Det3(m) / det;
    }
  }
  return {std::max(0.0, x[0]), std::max(0.0, x[1]), std::max(0.0, x[2])};
}

Result<CpuStepCalibration> CalibrateCpuSteps(ModelRunner& runner, const std::vector<KvGroupSpec>& groups,
                                             int64_t num_blocks, int64_t block_size, const Clock& clock) {
  const int64_t needed = kCalibrationBatch * ((16 + 8 + block_size - 1) / block_size + 1) *
                         static_cast<int64_t>(groups.size());
  if (num_blocks < needed) {
    return Status::InvalidArgument("the KV pool is too small to measure step times (needs " +
                                   std::to_string(needed) + " blocks)");
  }
  KvCacheManager kv(groups, num_blocks);
  SchedulerConfig sc;
  sc.max_num_batched_tokens = kCalibrationPrefill;
  sc.max_num_seqs = kCalibrationBatch;
  sc.max_model_len = kCalibrationPrefill + 16;
  Scheduler s(sc, &kv, nullptr);
  RequestId next_id = 1;
  CpuStepCalibration out;
  // Warm-up: first-touch page faults and sleeping helper threads would land in the first steps.
  GOODPUT_RETURN_IF_ERROR(MedianDecodeStep(s, runner, clock, kCalibrationBatch, next_id).status());
  GOODPUT_ASSIGN_OR_RETURN(out.decode1, MedianDecodeStep(s, runner, clock, 1, next_id));
  GOODPUT_ASSIGN_OR_RETURN(out.decode_batch, MedianDecodeStep(s, runner, clock, kCalibrationBatch, next_id));
  GOODPUT_ASSIGN_OR_RETURN(out.prefill, MedianPrefillStep(s, runner, clock, next_id));
  out.fit = FitCpuStepCoefficients(out.decode1, out.decode_batch, out.prefill);
  return out;
}

void CpuStepTimePredictor::Add(int64_t num_computed, int64_t num_new, bool /*samples*/) {
  tokens_ += static_cast<double>(num_new);
  attended_ += Attended(num_computed, num_new);
}

double CpuStepTimePredictor::Line(double tokens, double attended) const {
  return c_.fixed_s + c_.per_token_s * tokens + c_.per_attended_s * attended;
}

double CpuStepTimePredictor::SecondsWith(int64_t num_computed, int64_t num_new, bool /*samples*/) const {
  const double tokens = tokens_ + static_cast<double>(num_new);
  return scale_ * Line(tokens, attended_ + Attended(num_computed, num_new));
}

void CpuStepTimePredictor::Observe(const StepPlan& plan, double seconds) {
  constexpr double kWeight = 0.1;             // of the newest step: about ten steps remembered
  constexpr double kMaxLogRatio = 2.0794415;  // log(8)
  const auto tokens = static_cast<double>(plan.num_batched_tokens);
  const double predicted = Line(tokens, Attended(plan));
  if (tokens == 0 || !(seconds > 0) || !(predicted > 0)) return;
  const double x = std::clamp(std::log(seconds / predicted), -kMaxLogRatio, kMaxLogRatio);
  log_deviation_ += kWeight * (std::abs(x - log_ratio_) - log_deviation_);
  log_ratio_ += kWeight * (x - log_ratio_);
  scale_ = std::exp(log_ratio_ + log_deviation_);
}

}  // namespace goodput::cpu
