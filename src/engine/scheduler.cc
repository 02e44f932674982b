#include "engine/scheduler.h"

#include <algorithm>
#include <cassert>
#include <tuple>

#include <fmt/format.h>

namespace goodput {

Scheduler::Scheduler(SchedulerConfig config, KvCacheManager* kv, StepTimePredictor* predictor)
    : config_(config), kv_(kv), predictor_(predictor), recv_count_(config.recv_interval) {
  assert(config_.policy != SchedulingPolicy::kSlo || predictor_ != nullptr);
  assert(config_.max_num_batched_tokens > 0 && config_.max_num_seqs > 0 && config_.max_model_len > 0);
}

bool Scheduler::WaitingBefore(const Request& a, const Request& b) const {
  if (!ClassAware()) return std::tie(a.arrival_time, a.id) < std::tie(b.arrival_time, b.id);
  return std::tie(a.offline, a.priority, a.arrival_time, a.id) < std::tie(b.offline, b.priority, b.arrival_time, b.id);
}

bool Scheduler::RunningBefore(const Request& a, const Request& b) const {
  if (!ClassAware()) return a.admitted_seq < b.admitted_seq;
  return std::tie(a.offline, a.priority, a.admitted_seq) < std::tie(b.offline, b.priority, b.admitted_seq);
}

void Scheduler::InsertWaiting(Request* r) {
  // Arrivals mostly come in order: check the back first.
  if (waiting_.empty() || !WaitingBefore(*r, *waiting_.back())) {
    waiting_.push_back(r);
    return;
  }
  auto it = std::upper_bound(waiting_.begin(), waiting_.end(), r,
                             [this](const Request* a, const Request* b) { return WaitingBefore(*a, *b); });
  waiting_.insert(it, r);
}

void Scheduler::InsertRunning(Request* r) {
  auto it = std::upper_bound(running_.begin(), running_.end(), r,
                             [this](const Request* a, const Request* b) { return RunningBefore(*a, *b); });
  running_.insert(it, r);
}

std::optional<RequestEvent> Scheduler::Add(Request request) {
  RequestEvent rejected{request.id, 0, {}, true, FinishReason::kRejected, {}};
  const int64_t longest = LongestLength(request);
  if (request.num_prompt_tokens < 1 || request.num_prompt_tokens >= config_.max_model_len ||
      (WholePromptsOnly() && request.num_prompt_tokens > config_.max_num_batched_tokens) ||
      kv_->PeakBlocks(longest, config_.max_num_batched_tokens) > kv_->num_blocks() || requests_.count(request.id) > 0) {
    return rejected;
  }
  request.status = RequestStatus::kWaiting;
  request.num_computed_tokens = 0;
  auto [it, ok] = requests_.emplace(request.id, std::move(request));
  if (config_.recv_interval > 1)
    inbox_.push_back(&it->second);
  else
    InsertWaiting(&it->second);
  return std::nullopt;
}

bool Scheduler::Abort(RequestId id) {
  auto it = requests_.find(id);
  if (it == requests_.end()) return false;
  it->second.finish_reason = FinishReason::kAborted;  // nothing is held for an abort
  Finish(it->second);
  return true;
}

const Request* Scheduler::Find(RequestId id) const {
  auto it = requests_.find(id);
  return it == requests_.end() ? nullptr : &it->second;
}

int32_t Scheduler::TokensToCompute(const Request& r, int64_t budget) const {
  const int64_t remaining = r.num_tokens() - r.num_computed_tokens;
  int64_t n = remaining;
  if (remaining > 1 && config_.long_prefill_token_threshold > 0) {
    n = std::min(n, config_.long_prefill_token_threshold);
  }
  if (remaining == 1 && config_.num_speculative_tokens > 0) {  // decoding: verify k drafts too
    const int64_t room =
        std::min(r.sampling.max_tokens - r.num_output_tokens - 1, config_.max_model_len - r.num_tokens());
    n += std::clamp<int64_t>(room, 0, config_.num_speculative_tokens);
  }
  return static_cast<int32_t>(std::min(n, budget));
}

// Under the slo policy, how many of `num_new` tokens of `r` the step can take
// and still keep the interactive TPOT target: offline requests take only what
// fits (maybe nothing); an interactive prefill is cut to fit but always gets
// at least kInteractivePrefillFloor tokens, so its TTFT keeps moving.
int32_t Scheduler::TokensThatFit(const Request& r, int32_t num_new) const {
  constexpr int32_t kInteractivePrefillFloor = 256;
  if (config_.policy != SchedulingPolicy::kSlo || interactive_running_ == 0) return num_new;
  const int64_t remaining = r.num_tokens() - r.num_computed_tokens;
  if (!r.offline && remaining <= 1) return num_new;  // interactive decodes are what the target protects
  auto fits = [&](int32_t n) {
    return predictor_->SecondsWith(r.num_computed_tokens, n, n >= remaining) <= config_.slo_step_target;
  };
  if (fits(num_new)) return num_new;
  int32_t lo = 0, hi = num_new;  // fits(lo) holds (taking nothing), fits(hi) does not
  while (hi - lo > 1) {
    const int32_t mid = lo + (hi - lo) / 2;
    (fits(mid) ? lo : hi) = mid;
  }
  return r.offline ? lo : std::max(lo, std::min(num_new, kInteractivePrefillFloor));
}

void Scheduler::Emit(Request& r, int32_t num_new, int32_t num_draft, const BlockTable* table, bool admitted) {
  ScheduledRequest& s = plan_.requests.emplace_back();  // filled in place: this runs for every request every step
  s.id = r.id;
  s.num_computed = r.num_computed_tokens;
  s.num_new = num_new;
  s.num_draft = num_draft;
  s.samples = r.num_computed_tokens + (num_new - num_draft) >= r.num_tokens();
  s.restarted = admitted;
  s.request_class = r.request_class;
  s.offline = r.offline;
  s.arrival_time = r.arrival_time;
  s.blocks = table;
  if (!r.token_ids.empty()) {
    const auto begin = r.token_ids.begin() + r.num_computed_tokens;
    s.token_ids.assign(begin, begin + (num_new - num_draft));
  }
  if (s.restarted) s.sampling = r.sampling;
  if (predictor_) predictor_->Add(s.num_computed, s.num_new, s.samples);
  plan_.num_batched_tokens += num_new;
}

// Frees the blocks of the request at the back of running_ (the lowest in
// scheduling order) and sends it back to wait for recomputation.
void Scheduler::Preempt(int64_t& budget) {
  Request* victim = running_.back();
  running_.pop_back();
  // A victim already planned for this step leaves the plan and gives its tokens back.
  auto planned = std::find_if(plan_.requests.begin(), plan_.requests.end(),
                              [&](const ScheduledRequest& s) { return s.id == victim->id; });
  if (planned != plan_.requests.end()) {
    budget += planned->num_new;
    plan_.num_batched_tokens -= planned->num_new;
    plan_.requests.erase(planned);
  }
  kv_->Free(victim->id);
  if (victim->offline) --offline_running_;
  else --interactive_running_;
  victim->status = RequestStatus::kWaiting;
  victim->num_computed_tokens = 0;
  victim->num_external_computed_tokens = 0;
  ++victim->num_preemptions;
  ++preemptions_;
  plan_.preempted.push_back(victim->id);
  InsertWaiting(victim);
}

void Scheduler::ScheduleRunning(int64_t& budget, RunningPass pass) {
  for (size_t i = 0; i < running_.size() && budget > 0;) {
    Request& r = *running_[i];
    const bool in_prompt = r.num_tokens() - r.num_computed_tokens > 1;
    if ((pass == RunningPass::kPrompts && !in_prompt) || (pass == RunningPass::kDecodes && in_prompt)) {
      ++i;
      continue;
    }
    const int32_t n = TokensThatFit(r, TokensToCompute(r, budget));
    if (n == 0) {
      ++i;
      continue;
    }
    const int32_t drafts = static_cast<int32_t>(std::max<int64_t>(0, n - (r.num_tokens() - r.num_computed_tokens)));
    const BlockTable* table = nullptr;
    while (!(table = kv_->AllocateSlots(r.id, r.num_computed_tokens, n))) {
      const bool self = running_.back() == &r;
      Preempt(budget);
      if (self) break;
    }
    if (!table) break;  // r itself was preempted: it was the last one
    Emit(r, n, drafts, table, /*admitted=*/false);
    budget -= n;
    ++i;
  }
}

int64_t Scheduler::LongestLength(const Request& r) const {
  return std::min(r.num_prompt_tokens + r.sampling.max_tokens, config_.max_model_len);
}

int64_t Scheduler::BlocksToComplete(const Request& r) const {
  return kv_->BlocksToReach(r.id, LongestLength(r), config_.max_num_batched_tokens);
}

int64_t Scheduler::SpareBlocks() const {
  int64_t spare = kv_->free_blocks();
  for (const Request* r : running_) spare -= BlocksToComplete(*r);
  return spare;
}

void Scheduler::ScheduleWaiting(int64_t& budget) {
  // guaranteed_no_evict: what the pool holds beyond the running requests' growth.
  int64_t spare = config_.guaranteed_no_evict && !waiting_.empty() ? SpareBlocks() : 0;
  for (size_t i = 0; i < waiting_.size() && budget > 0;) {
    Request& r = *waiting_[i];
    if (static_cast<int64_t>(running_.size()) >= config_.max_num_seqs) {
      // Class-aware policies make room for an interactive request by sending
      // the newest offline one back to wait.
      if (!ClassAware() || r.offline || !running_.back()->offline) return;
      Preempt(budget);
    }
    const bool capped = r.offline && config_.max_offline_seqs > 0 && offline_running_ >= config_.max_offline_seqs;
    // A prefix other requests left in the cache need not be computed again,
    // nor what another instance computed.
    const int64_t cached = capped ? 0 : kv_->AcquireCachedPrefix(r.id, r.token_ids);
    r.num_computed_tokens = std::max(cached, std::min(r.num_external_computed_tokens, r.num_tokens() - 1));
    const int32_t n = capped ? 0 : TokensThatFit(r, TokensToCompute(r, budget));
    if (WholePromptsOnly() && n > 0 && n < r.num_tokens() - r.num_computed_tokens) {
      if (cached > 0) kv_->Free(r.id);
      r.num_computed_tokens = 0;
      return;
    }
    const int64_t reserve = config_.guaranteed_no_evict && n > 0 ? BlocksToComplete(r) : 0;
    const bool room = !config_.guaranteed_no_evict || reserve <= spare;
    const BlockTable* table = n > 0 && room ? kv_->AllocateSlots(r.id, r.num_computed_tokens, n) : nullptr;
    if (!table) {
      if (cached > 0) kv_->Free(r.id);  // the shared prefix goes back until the request can run
      r.num_computed_tokens = 0;
    }
    if (n == 0) {
      if (ClassAware()) return;  // everything behind it is offline too
      ++i;                       // fcfs: interactive requests behind it may still go
      continue;
    }
    if (!table) return;  // no room: wait for blocks to free up (never preempt for a waiting request)
    spare -= reserve;
    prefix_queried_tokens_ += r.num_tokens();
    prefix_hit_tokens_ += cached;
    waiting_.erase(waiting_.begin() + static_cast<std::ptrdiff_t>(i));
    r.status = RequestStatus::kRunning;
    r.admitted_seq = ++admitted_counter_;
    if (r.offline) ++offline_running_;
    else ++interactive_running_;
    InsertRunning(&r);
    Emit(r, n, 0, table, /*admitted=*/true);
    budget -= n;
  }
}

const StepPlan& Scheduler::Schedule() {
  plan_.requests.clear();
  plan_.preempted.clear();
  plan_.num_batched_tokens = 0;
  plan_.released.swap(released_);
  released_.clear();
  if (predictor_) predictor_->Begin();
  int64_t budget = config_.max_num_batched_tokens;
  if (steps_left_in_run_ > 0) {  // multi-step: the run's requests only
    --steps_left_in_run_;
    ScheduleRunning(budget);
    if (!plan_.requests.empty()) {
      CountStep();
      return plan_;
    }
    steps_left_in_run_ = 0;  // the run's requests all finished: the scheduler looks again now
  }
  Receive();
  SchedulePass(budget);
  if (!plan_.requests.empty() && !PlanComputesAPrompt()) steps_left_in_run_ = config_.num_scheduler_steps - 1;
  CountStep();
  return plan_;
}

void Scheduler::Receive() {
  // SGLang's SchedulerRecvSkipper takes arrivals in (any or none) once its
  // count reaches the interval and starts counting again; an idle engine's
  // loop counts up to it at once.
  if (recv_count_ < config_.recv_interval && !running_.empty()) return;
  for (Request* r : inbox_) InsertWaiting(r);
  inbox_.clear();
  recv_count_ = 0;
}

void Scheduler::CountStep() {
  // A decode step counts 1; a step with a prompt (SGLang weighs it 1,000) or
  // none at all lets the next pass take arrivals in. Interval 1 (every
  // pass) needs no count, and the step's plan is not scanned for it.
  if (config_.recv_interval <= 1) return;
  const bool decodes_only = !plan_.requests.empty() && !PlanComputesAPrompt();
  recv_count_ = decodes_only ? recv_count_ + 1 : config_.recv_interval;
}

bool Scheduler::PlanComputesAPrompt() const {
  // A decode computes its sampled token and its drafts; more than that is a prompt (or its chunk).
  return std::any_of(plan_.requests.begin(), plan_.requests.end(),
                     [](const ScheduledRequest& r) { return r.num_new > r.num_draft + 1; });
}

void Scheduler::SchedulePass(int64_t& budget) {
  if (config_.prefill_first) {
    // A chunked prompt's next chunk goes before new prompts (SGLang's chunked request).
    ScheduleRunning(budget, RunningPass::kPrompts);
    ScheduleWaiting(budget);
    // A request whose prompt's KV came from elsewhere computes one token, as a decode: it runs beside them.
    if (!PlanComputesAPrompt()) ScheduleRunning(budget, RunningPass::kDecodes);
    return;
  }
  ScheduleRunning(budget);
  // As vLLM: a step that had to preempt admits no new requests.
  if (plan_.preempted.empty()) ScheduleWaiting(budget);
}

bool Scheduler::CheckFinished(Request& r, int32_t last_token) const {
  if (r.num_output_tokens >= r.sampling.max_tokens) {
    r.finish_reason = FinishReason::kLength;
  } else if (r.num_tokens() >= config_.max_model_len) {
    r.finish_reason = FinishReason::kMaxModelLen;
  } else if (last_token >= 0 && !r.sampling.ignore_eos && r.num_output_tokens >= r.sampling.min_tokens &&
             (last_token == config_.eos_token_id ||
              std::find(r.sampling.stop_token_ids.begin(), r.sampling.stop_token_ids.end(), last_token) !=
                  r.sampling.stop_token_ids.end())) {
    r.finish_reason = FinishReason::kStop;
  }
  return r.finish_reason != FinishReason::kNone;
}

void Scheduler::Finish(Request& r) {
  if (r.status == RequestStatus::kRunning) {
    running_.erase(std::find(running_.begin(), running_.end(), &r));
    if (r.offline) --offline_running_;
    else --interactive_running_;
  } else if (auto w = std::find(waiting_.begin(), waiting_.end(), &r); w != waiting_.end()) {
    waiting_.erase(w);
  } else {
    inbox_.erase(std::find(inbox_.begin(), inbox_.end(), &r));
  }
  const bool held = r.hold_kv_after_finish && r.finish_reason != FinishReason::kAborted;
  if (!held) kv_->Free(r.id);
  released_.push_back(r.id);
  requests_.erase(r.id);  // r is gone after this
}

void Scheduler::ReleaseKv(RequestId id) { kv_->Free(id); }

std::vector<RequestEvent> Scheduler::Update(const StepPlan& plan, const StepResult& result) {
  std::vector<RequestEvent> events;
  events.reserve(result.sampled.size());
  size_t next = 0;
  for (const ScheduledRequest& s : plan.requests) {
    auto it = requests_.find(s.id);
    const SampledTokens* sampled = nullptr;
    if (s.samples) {
      assert(next < result.sampled.size() && result.sampled[next].id == s.id);
      sampled = &result.sampled[next++];
    }
    if (it == requests_.end()) continue;  // aborted while the step ran
    Request& r = it->second;
    if (!sampled) {
      r.num_computed_tokens += s.num_new;
      kv_->CacheFullBlocks(r.id, r.token_ids, r.num_computed_tokens);
      continue;
    }
    const int32_t produced = std::clamp(sampled->num_tokens, 1, s.num_draft + 1);
    r.num_computed_tokens += s.num_new - s.num_draft + (produced - 1);
    RequestEvent e{r.id, 0, {}, false, FinishReason::kNone, {}};
    for (int32_t k = 0; k < produced && !e.finished; ++k) {
      const int32_t token = k < static_cast<int32_t>(sampled->token_ids.size()) ? sampled->token_ids[k] : -1;
      if (token >= 0) {
        r.token_ids.push_back(token);
        e.new_token_ids.push_back(token);
      }
      if (k < static_cast<int32_t>(sampled->logprobs.size())) e.new_logprobs.push_back(sampled->logprobs[k]);
      ++r.num_output_tokens;
      ++e.num_new_tokens;
      e.finished = CheckFinished(r, token);
    }
    // Drafts accepted past a stop are dropped: their KV is not the sequence's.
    r.num_computed_tokens = std::min(r.num_computed_tokens, r.num_tokens() - 1);
    kv_->CacheFullBlocks(r.id, r.token_ids, r.num_computed_tokens);
    if (e.finished) {
      e.reason = r.finish_reason;
      Finish(r);
    }
    events.push_back(std::move(e));
  }
  return events;
}

}  // namespace goodput
