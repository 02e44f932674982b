#include "engine/engine_service.h"

namespace goodput {

EngineService::EngineService(Scheduler* scheduler, KvCacheManager* kv, ModelRunner* runner, Clock* clock)
    : scheduler_(scheduler), kv_(kv), clock_(clock), core_(scheduler, runner, clock) {}

EngineService::~EngineService() { Stop(/*finish_inflight=*/false); }

void EngineService::Start() {
  std::lock_guard<std::mutex> lock(mu_);
  if (thread_.joinable()) return;
  accepting_ = true;
  stopping_ = false;
  thread_ = std::thread([this] { Loop(); });
}

void EngineService::Stop(bool finish_inflight) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!thread_.joinable()) return;
    accepting_ = false;
    stopping_ = true;
    finish_inflight_ = finish_inflight;
  }
  cv_.notify_all();
  thread_.join();
}

bool EngineService::Submit(Request request, OutputCallback on_output) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!accepting_) return false;
    request.arrival_time = clock_->Now();
    commands_.push_back(Command{Command::Kind::kAdd, std::move(request), std::move(on_output), 0});
  }
  cv_.notify_all();
  return true;
}

void EngineService::Abort(RequestId id) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    commands_.push_back(Command{Command::Kind::kAbort, Request{}, nullptr, id});
  }
  cv_.notify_all();
}

EngineStats EngineService::Stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

void EngineService::Deliver(const RequestEvent& e, double now) {
  auto it = callbacks_.find(e.id);
  if (it == callbacks_.end()) return;
  RequestOutput out{e.id, e.new_token_ids, e.num_new_tokens, e.finished, e.reason, now, e.new_logprobs};
  it->second(out);
  std::lock_guard<std::mutex> lock(mu_);
  stats_.generation_tokens_total += e.num_new_tokens;
  if (e.finished) {
    ++(e.reason == FinishReason::kRejected ? stats_.requests_rejected_total
       : e.reason == FinishReason::kAborted ? stats_.requests_aborted_total
                                            : stats_.requests_finished_total);
    callbacks_.erase(it);
  }
}

void EngineService::Apply(std::deque<Command>& commands) {
  for (auto& c : commands) {
    if (c.kind == Command::Kind::kAdd) {
      const RequestId id = c.request.id;
      const int64_t prompt = c.request.num_prompt_tokens;
      callbacks_[id] = std::move(c.on_output);
      if (auto rejected = scheduler_->Add(std::move(c.request))) {
        Deliver(*rejected, clock_->Now());
      } else {
        std::lock_guard<std::mutex> lock(mu_);
        stats_.prompt_tokens_total += prompt;
      }
    } else if (scheduler_->Abort(c.id)) {
      Deliver(RequestEvent{c.id, 0, {}, true, FinishReason::kAborted, {}}, clock_->Now());
    }
  }
  commands.clear();
}

void EngineService::AbortAll() {
  std::vector<RequestId> ids;
  for (const auto& [id, cb] : callbacks_) ids.push_back(id);
  for (RequestId id : ids) {
    scheduler_->Abort(id);
    Deliver(RequestEvent{id, 0, {}, true, FinishReason::kAborted, {}}, clock_->Now());
  }
}

void EngineService::RefreshStats() {
  std::lock_guard<std::mutex> lock(mu_);
  stats_.running = static_cast<int64_t>(scheduler_->num_running());
  stats_.waiting = static_cast<int64_t>(scheduler_->num_waiting());
  stats_.kv_usage = kv_->Usage();
  stats_.free_blocks = kv_->free_blocks();
  stats_.num_blocks = kv_->num_blocks();
  stats_.preemptions_total = scheduler_->num_preemptions();
  stats_.prefix_cache_queries_total = scheduler_->prefix_queried_tokens();
  stats_.prefix_cache_hits_total = scheduler_->prefix_hit_tokens();
}

void EngineService::Loop() {
  std::deque<Command> commands;
  while (true) {
    bool stop = false, finish = true;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [&] { return stopping_ || !commands_.empty() || scheduler_->HasWork(); });
      commands.swap(commands_);
      stop = stopping_;
      finish = finish_inflight_;
    }
    Apply(commands);
    if (stop && (!finish || !scheduler_->HasWork())) break;
    if (scheduler_->HasWork()) {
      StepStats step;
      const auto events = core_.Step(&step);
      for (const auto& e : events) Deliver(e, step.end);
      std::lock_guard<std::mutex> lock(mu_);
      stats_.steps_total += step.num_requests > 0 ? 1 : 0;
    }
    RefreshStats();
  }
  AbortAll();
  RefreshStats();
}

}  // namespace goodput
