#include "sim/simulator.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <queue>
#include <random>
#include <unordered_map>

#include <fmt/format.h>

#include "core/clock.h"
#include "engine/engine_core.h"
#include "sim/cost_model_runner.h"
#include "sim/replica.h"
#include "workload/arrivals.h"

namespace goodput {
namespace {

// One run's mutable state: the engine instances (one, or a fleet behind a
// router), the generator, the records.
class Run {
 public:
  Run(const Workload& w, const ArrivalSpec& load, const SimOptions& o, const CostModel& cost)
      : w_(w),
        gen_(w, load),
        router_(o.router),
        record_token_times_(o.record_token_times),
        reserve_token_times_(o.record_token_times && o.scheduler.num_speculative_tokens == 0),
        loop_(o.engine_loop),
        loop_draws_(o.seed * 104729 + 3),
        frontend_latency_(cost.factors().frontend_latency_s),
        prefill_(std::max(0, o.prefill_replicas)),
        prefill_router_(o.router),
        kv_groups_(o.kv_groups),
        kv_link_(o.kv_link),
        kv_block_bytes_(o.kv_block_bytes),
        prefill_pool_(prefill_ > 0 ? o.prefill_pool : nullptr) {
    for (int k = 0; k < prefill_ + std::max(1, o.replicas); ++k) {
      const auto stream = static_cast<uint64_t>(k);
      if (k < prefill_ && prefill_pool_) {
        replicas_.push_back(std::make_unique<Replica>(PrefillOptions(o), *prefill_pool_->cost, stream));
      } else {
        replicas_.push_back(std::make_unique<Replica>(o, cost, stream));
      }
    }
    outstanding_.assign(replicas_.size(), 0);
    link_free_.assign(static_cast<size_t>(prefill_), 0.0);
    loads_.resize(replicas_.size());
    routed_.assign(replicas_.size(), 0);
    parked_.assign(replicas_.size(), false);
  }

  Status Go(SimRun& out);

 private:
  // `o` with the prefill pool's engine settings and KV pool in place of the decode instances'.
  SimOptions PrefillOptions(const SimOptions& o) const;
  // Seconds to move a `tokens`-token prompt's KV from a prefill instance.
  double TransferSeconds(int64_t tokens) const;
  // A request sent by its client: through the front end, then to the engine.
  void Arrive(const WorkItem& item);
  void Submit(const WorkItem& item, double t_engine);
  // Disaggregated: the request after its prefill, with the KV moved, to a decode instance.
  void SubmitDecode(const WorkItem& item, double t);
  // The request `item` asks an instance for; `prefill_only`: its prompt and one token.
  Request MakeRequest(const WorkItem& item, double t, bool prefill_only, const Replica& replica) const;
  // Hands `r` to instance `k` at `t`; a refusal is recorded and answered.
  void Hand(Request r, int k, double t);
  // The replica `router` picks for `item` at `t` among `count` from `first`.
  int Route(const WorkItem& item, double t, int first, int count, Router& router);
  // The instances that decode (every one when not disaggregated), after the prefill_ prefill instances.
  int Decoders() const { return static_cast<int>(replicas_.size()) - prefill_; }
  // A prefill instance's event: the prefill's end starts the KV transfer.
  void OnPrefillEvent(const RequestEvent& e, double now, double delay);
  // Records `e`; a finished request's client sends its next one `delay`
  // after `now`.
  void OnEvent(const RequestEvent& e, double now, double delay);
  std::vector<double> FollowUpDelays(int step_requests, int finishes, std::optional<double> gap);
  // Takes in every request sent by `t` and submits those through the front end by `t`.
  void AdmitUpTo(double t);
  std::optional<double> NextArrival() const;
  // The replica with work that is ready first (the lowest index of equals),
  // leaving out those parked; -1 when none.
  int NextReady() const;
  Status StepReplica(int k, SimRun& out);
  Status Stalled() const;
  void Finish(SimRun& out);

  const Workload& w_;
  RequestGenerator gen_;
  std::vector<std::unique_ptr<Replica>> replicas_;
  Router router_;
  std::vector<int64_t> outstanding_;  // per replica, as the router sees it
  std::vector<ReplicaLoad> loads_;    // what Route shows the router, kept to spare an allocation a request
  std::vector<int64_t> routed_;
  // A replica that could schedule nothing waits for a new request: its state
  // cannot change before one.
  std::vector<bool> parked_;
  // Finished requests the router learns of at their time: (time, replica).
  std::priority_queue<std::pair<double, int>, std::vector<std::pair<double, int>>, std::greater<>> finishes_;
  std::vector<int> replica_of_;
  std::unordered_map<int64_t, WorkItem> turns_;  // conversations' requests in flight, by index
  std::vector<RequestRecord> records_;
  std::vector<int> client_of_;
  int64_t rejected_ = 0;
  bool record_token_times_;
  // A token a step without drafts: an answer's times reserved at once (drafting steps carry several).
  bool reserve_token_times_;
  EngineLoop loop_;
  std::mt19937_64 loop_draws_;
  std::uniform_real_distribution<double> quantile_{0.0, 1.0};
  // Closed-loop requests on their way to the engine, earliest first.
  struct Later {
    bool operator()(const WorkItem& a, const WorkItem& b) const { return a.t_arrival > b.t_arrival; }
  };
  std::priority_queue<WorkItem, std::vector<WorkItem>, Later> in_flight_;
  // The front end's latency (CostFactors) and the requests on their way
  // through it, earliest first.
  double frontend_latency_;
  struct ToEngine {
    double t;
    WorkItem item;
    int from = -1;  // a handoff: the prefill instance holding the prompt's blocks
    bool operator>(const ToEngine& o) const { return t > o.t; }
  };
  std::priority_queue<ToEngine, std::vector<ToEngine>, std::greater<>> to_engine_;
  // Disaggregation: the first prefill_ instances prefill; requests being
  // prefilled, by index; prompts whose KV is on its way, earliest first.
  int prefill_;
  Router prefill_router_;
  std::vector<KvGroupSpec> kv_groups_;
  KvLink kv_link_;
  int64_t kv_block_bytes_;
  std::shared_ptr<const PrefillPool> prefill_pool_;  // none: prefill instances are sized as the others
  std::unordered_map<int64_t, WorkItem> prefilling_;
  std::priority_queue<ToEngine, std::vector<ToEngine>, std::greater<>> handoffs_;
  std::vector<double> link_free_;  // per prefill instance: when its link has sent what it was given
};

SimOptions Run::PrefillOptions(const SimOptions& o) const {
  SimOptions p = o;
  const double slo_step_target = o.scheduler.slo_step_target;
  p.scheduler = prefill_pool_->scheduler;
  p.scheduler.slo_step_target = slo_step_target;
  p.kv_groups = prefill_pool_->kv_groups;
  p.num_blocks = prefill_pool_->num_blocks;
  return p;
}

double Run::TransferSeconds(int64_t tokens) const {
  const double receive = KvTransferSeconds(kv_link_, kv_groups_, kv_block_bytes_, tokens);
  if (!prefill_pool_) return receive;
  return std::max(receive,
                  KvTransferSeconds(kv_link_, prefill_pool_->kv_groups, prefill_pool_->kv_block_bytes, tokens));
}

void Run::Arrive(const WorkItem& item) {
  if (frontend_latency_ <= 0) return Submit(item, item.t_arrival);
  to_engine_.push({item.t_arrival + frontend_latency_, item});
}

int Run::Route(const WorkItem& item, double t, int first, int count, Router& router) {
  if (count == 1) return first;
  while (!finishes_.empty() && finishes_.top().first <= t) {
    --outstanding_[static_cast<size_t>(finishes_.top().second)];
    finishes_.pop();
  }
  loads_.resize(static_cast<size_t>(count));
  for (int k = 0; k < count; ++k) {
    const auto at = static_cast<size_t>(first + k);
    loads_[static_cast<size_t>(k)] = ReplicaLoad{outstanding_[at], replicas_[at]->KvUsage()};
  }
  return first + router.Pick(item, loads_);
}

void Run::Submit(const WorkItem& item, double t_engine) {
  if (static_cast<int64_t>(records_.size()) <= item.index) {
    records_.resize(item.index + 1);
    client_of_.resize(item.index + 1, -1);
    replica_of_.resize(item.index + 1, 0);
  }
  RequestRecord& rec = records_[item.index];
  rec.request_class = w_.classes[item.class_index].name;
  rec.t_arrival = rec.t_sent = item.t_arrival;
  rec.first_wave = item.first_wave;
  rec.n_in = item.prompt_tokens;
  if (reserve_token_times_) rec.chunks.reserve(static_cast<size_t>(item.output_tokens));
  client_of_[item.index] = item.client;
  if (item.session >= 0) turns_[item.index] = item;
  const int k = prefill_ > 0 ? Route(item, t_engine, 0, prefill_, prefill_router_)
                             : Route(item, t_engine, 0, Decoders(), router_);
  if (prefill_ > 0) prefilling_[item.index] = item;
  Hand(MakeRequest(item, t_engine, prefill_ > 0, *replicas_[static_cast<size_t>(k)]), k, t_engine);
}

void Run::SubmitDecode(const WorkItem& item, double t) {
  const int k = Route(item, t, prefill_, Decoders(), router_);
  Request r = MakeRequest(item, t, false, *replicas_[static_cast<size_t>(k)]);
  r.num_external_computed_tokens = item.prompt_tokens;
  Hand(std::move(r), k, t);
}

Request Run::MakeRequest(const WorkItem& item, double t, bool prefill_only, const Replica& replica) const {
  const RequestClass& c = w_.classes[item.class_index];
  Request r;
  r.id = item.index;
  r.request_class = item.class_index;
  r.offline = c.offline;
  r.priority = c.priority;
  r.arrival_time = t;
  r.num_prompt_tokens = item.prompt_tokens;
  r.sampling.max_tokens = prefill_only ? 1 : item.output_tokens;
  r.hold_kv_after_finish = prefill_only;
  r.sampling.ignore_eos = true;
  // Token ids (each prompt its own, shared prefixes alike) whenever the cache
  // can hold them: a preempted request finds its own blocks again when it is
  // readmitted, as in vLLM, where recomputation is mostly cache hits.
  if (replica.prefix_caching()) r.token_ids = PromptTokenIds(item, w_.seed);
  return r;
}

void Run::Hand(Request r, int k, double t) {
  const RequestId id = r.id;
  replica_of_[id] = k;
  ++routed_[static_cast<size_t>(k)];
  ++outstanding_[static_cast<size_t>(k)];
  Replica& replica = *replicas_[static_cast<size_t>(k)];
  if (parked_[static_cast<size_t>(k)]) {  // it waited for this request: its next step is no earlier
    replica.AdvanceTo(t);
    parked_[static_cast<size_t>(k)] = false;
  }
  if (auto rejected = replica.Submit(std::move(r))) {
    RequestRecord& rec = records_[id];
    rec.ok = false;
    rec.error = "rejected: longer than the max model length or the KV pool";
    ++rejected_;
    OnEvent(*rejected, t, FollowUpDelays(0, 1, std::nullopt).front());
  }
}

void Run::OnPrefillEvent(const RequestEvent& e, double now, double delay) {
  if (!e.finished) return;
  const WorkItem item = prefilling_[e.id];
  prefilling_.erase(e.id);
  if (!records_[e.id].ok) return OnEvent(e, now, delay);  // refused: its client goes on
  const int k = replica_of_[e.id];
  finishes_.push({now, k});
  // One instance's transfers go out one after another over its link.
  double& free = link_free_[static_cast<size_t>(k)];
  free = std::max(free, now) + TransferSeconds(item.prompt_tokens);
  handoffs_.push({free, item, k});
}

void Run::OnEvent(const RequestEvent& e, double now, double delay) {
  if (prefill_ > 0 && prefilling_.count(e.id)) return OnPrefillEvent(e, now, delay);
  RequestRecord& rec = records_[e.id];
  if (e.num_new_tokens > 0) {
    if (record_token_times_) rec.chunks.push_back(TokenChunk{now, e.num_new_tokens});
    if (!rec.t_first) rec.t_first = now;
    rec.t_last = now;
    rec.n_out += e.num_new_tokens;
  }
  if (!e.finished) return;
  if (replicas_.size() > 1) finishes_.push({now, replica_of_[e.id]});
  if (auto done = turns_.find(e.id); done != turns_.end()) {
    // A conversation goes on while its turns are answered (a refused one ends it).
    std::optional<WorkItem> next = rec.ok ? gen_.NextTurn(done->second, now + delay) : std::nullopt;
    turns_.erase(done);
    if (next) return in_flight_.push(*next);
  }
  const int client = client_of_[e.id];
  if (client >= 0) {
    if (auto next = gen_.NextForClient(client, now + delay)) in_flight_.push(*next);
  }
}

// From the end of a step of `step_requests` to each of its `finishes`'
// follow-ups reaching the engine, earliest first (rank 0 arrives first, as
// goodput calibrate ranks them); `gap`: the time until the next step starts,
// none when the engine has no other work. The joiners come first, within the
// gap (at distinct times: the step log tells requests apart by their
// arrivals); one draw decides them, so a rank joins only if the ranks before
// it did, each with the loop's chance for its rank. The rest arrive the
// loop's late follow-up time after the next step's start.
std::vector<double> Run::FollowUpDelays(int step_requests, int finishes, std::optional<double> gap) {
  std::vector<double> joins, lates;
  if (finishes == 0) return joins;  // no draw: a step that finishes nothing leaves the loop's draws as they were
  const double u = quantile_(loop_draws_);
  double chance = 1;
  for (int rank = 0; rank < finishes; ++rank) {
    chance = std::min(chance, loop_.join.At(step_requests, rank));
    if (gap && u < chance) {
      joins.push_back(*gap * quantile_(loop_draws_));
    } else {
      lates.push_back(gap.value_or(0) + loop_.late_follow_up.Draw(step_requests, quantile_(loop_draws_), rank));
    }
  }
  std::sort(joins.begin(), joins.end());
  std::sort(lates.begin(), lates.end());
  joins.insert(joins.end(), lates.begin(), lates.end());
  return joins;
}

void Run::AdmitUpTo(double t) {
  while (!in_flight_.empty() && in_flight_.top().t_arrival <= t) {
    const WorkItem item = in_flight_.top();
    in_flight_.pop();
    Arrive(item);
  }
  while (auto next = gen_.NextOpenArrival()) {
    if (*next > t) break;
    Arrive(gen_.PopOpen());
  }
  while (!to_engine_.empty() && to_engine_.top().t <= t) {
    const ToEngine next = to_engine_.top();
    to_engine_.pop();
    Submit(next.item, next.t);
  }
  while (!handoffs_.empty() && handoffs_.top().t <= t) {
    const ToEngine next = handoffs_.top();
    handoffs_.pop();
    const auto from = static_cast<size_t>(next.from);
    replicas_[from]->ReleaseKv(next.item.index);  // read: the prefill instance may use its blocks again
    if (parked_[from]) {
      replicas_[from]->AdvanceTo(next.t);
      parked_[from] = false;
    }
    SubmitDecode(next.item, next.t);
  }
}

std::optional<double> Run::NextArrival() const {
  std::optional<double> t = gen_.NextOpenArrival();
  if (!in_flight_.empty() && (!t || in_flight_.top().t_arrival < *t)) t = in_flight_.top().t_arrival;
  if (!to_engine_.empty() && (!t || to_engine_.top().t < *t)) t = to_engine_.top().t;
  if (!handoffs_.empty() && (!t || handoffs_.top().t < *t)) t = handoffs_.top().t;
  return t;
}

int Run::NextReady() const {
  int best = -1;
  for (size_t k = 0; k < replicas_.size(); ++k) {
    if (parked_[k] || !replicas_[k]->HasWork()) continue;
    if (best < 0 || replicas_[k]->Now() < replicas_[static_cast<size_t>(best)]->Now()) best = static_cast<int>(k);
  }
  return best;
}

Status Run::Stalled() const {
  for (const auto& r : replicas_) {
    if (!r->HasWork()) continue;
    return Status::FailedPrecondition(fmt::format(
        "the engine stalled at t={:.3f}s with {} waiting and {} running requests and nothing left to arrive", r->Now(),
        r->scheduler().num_waiting(), r->scheduler().num_running()));
  }
  return Status::Ok();
}

Status Run::StepReplica(int k, SimRun& out) {
  Replica& r = *replicas_[static_cast<size_t>(k)];
  StepStats stats;
  auto events = r.Step(&stats);
  if (stats.num_requests == 0) {  // nothing can run until a request comes to it
    parked_[static_cast<size_t>(k)] = true;
    return Status::Ok();
  }
  ++out.steps;
  out.peak_kv_usage = std::max(out.peak_kv_usage, r.KvUsage());
  out.peak_running = std::max<int64_t>(out.peak_running, static_cast<int64_t>(stats.num_requests));
  ++out.replicas[static_cast<size_t>(k)].steps;
  const int n = static_cast<int>(stats.num_requests);
  // Outputs handed over before the next step: what arrives meanwhile joins it.
  std::optional<double> gap;
  if (r.HasWork()) gap = loop_.between_steps.Draw(n, quantile_(loop_draws_));
  const auto finishes = std::count_if(events.begin(), events.end(), [](const RequestEvent& e) { return e.finished; });
  const std::vector<double> delays = FollowUpDelays(n, static_cast<int>(finishes), gap);
  size_t rank = 0;
  for (const auto& e : events) OnEvent(e, stats.end, e.finished ? delays[rank++] : 0);
  if (gap) r.Elapse(*gap);
  return Status::Ok();
}

Status Run::Go(SimRun& out) {
  out.replicas.assign(replicas_.size(), ReplicaStats{});
  for (int c = 0; c < gen_.closed_clients(); ++c) {
    if (auto item = gen_.NextForClient(c, 0)) Arrive(*item);
  }
  while (true) {
    const int next = NextReady();
    const std::optional<double> arrival = NextArrival();
    if (arrival && (next < 0 || *arrival <= replicas_[static_cast<size_t>(next)]->Now())) {
      AdmitUpTo(*arrival);
      continue;
    }
    if (next < 0) break;
    GOODPUT_RETURN_IF_ERROR(StepReplica(next, out));
  }
  GOODPUT_RETURN_IF_ERROR(Stalled());
  Finish(out);
  return Status::Ok();
}

void Run::Finish(SimRun& out) {
  out.records = std::move(records_);
  out.rejected = rejected_;
  for (size_t k = 0; k < replicas_.size(); ++k) {
    const Replica& r = *replicas_[k];
    ReplicaStats& s = out.replicas[k];
    s.requests = routed_[k];
    s.prefill = static_cast<int>(k) < prefill_;
    s.prefix_queried_tokens = r.scheduler().prefix_queried_tokens();
    s.prefix_hit_tokens = r.scheduler().prefix_hit_tokens();
    out.preemptions += r.scheduler().num_preemptions();
    out.prefix_queried_tokens += s.prefix_queried_tokens;
    out.prefix_hit_tokens += s.prefix_hit_tokens;
    out.simulated_seconds = std::max(out.simulated_seconds, r.Now());
    out.draft_steps += r.runner().draft_steps();
    out.draft_step_tokens += r.runner().draft_step_tokens();
    out.drafted_tokens += r.runner().drafted_tokens();
  }
}

}  // namespace

Result<double> PerPositionAcceptance(int k, double accepted) {
  if (k < 1) return Status::InvalidArgument("speculative acceptance needs --num-speculative-tokens of at least 1");
  if (!(accepted >= 0 && accepted <= k)) {
    return Status::InvalidArgument(fmt::format("{:g} accepted drafts per step is outside 0..{} (the drafts per step)",
                                               accepted, k));
  }
  const auto expected = [k](double a) {
    double sum = 0, term = 1;
    for (int i = 0; i < k; ++i) sum += (term *= a);
    return sum;
  };
  double lo = 0, hi = 1;  // expected() rises from 0 to k: bisection to double precision
  for (int i = 0; i < 100; ++i) (expected((lo + hi) / 2) < accepted ? lo : hi) = (lo + hi) / 2;
  return (lo + hi) / 2;
}

double SloStepTarget(const Workload& w, double headroom, int num_spec, double acceptance) {
  double tpot = std::numeric_limits<double>::infinity();
  for (const auto& c : w.classes) {
    if (!c.slo || c.offline) continue;
    for (const auto& t : c.slo->targets) {
      if (t.metric == SloMetric::kTpot || t.metric == SloMetric::kItl) tpot = std::min(tpot, t.threshold_s);
    }
  }
  // Mean tokens a decode step yields: (1 - a^(k+1)) / (1 - a).
  const double a = acceptance;
  const double per_step = num_spec > 0 && a < 1 ? (1 - std::pow(a, num_spec + 1)) / (1 - a) : 1.0 + num_spec * (a >= 1);
  return tpot * headroom * per_step;
}

Result<SimRun> Simulate(const Workload& workload, const ArrivalSpec& load, const SimOptions& options,
                        const CostModel& cost) {
  if (options.num_blocks <= 0 || options.kv_groups.empty()) {
    return Status::InvalidArgument("the KV pool has no blocks");
  }
  const Workload w = ForRepetition(workload, options.seed);
  SimOptions o = options;
  if (o.scheduler.policy == SchedulingPolicy::kSlo) {
    o.scheduler.slo_step_target =
        SloStepTarget(w, o.slo_headroom, o.scheduler.num_speculative_tokens, o.acceptance_rate);
  }
  SimRun out;
  Run run(w, load, o, cost);
  GOODPUT_RETURN_IF_ERROR(run.Go(out));
  return out;
}

}  // namespace goodput
