#include "workload/arrivals.h"

#include <algorithm>
#include <limits>

namespace goodput {

RequestGenerator::RequestGenerator(const Workload& w, const ArrivalSpec& load)
    : workload_(w),
      turn_rng_(w.seed * 0x9e3779b97f4a7c15ull + 5),
      think_rng_(w.seed * 0x9e3779b97f4a7c15ull + 11),
      budget_(w.requests) {
  std::vector<int> shared;
  for (size_t i = 0; i < w.classes.size(); ++i) {
    const RequestClass& c = w.classes[i];
    const uint64_t seed = w.seed * 1000003 + i + 1;
    if (w.HasProfile()) {
      AddStream({static_cast<int>(i)}, ArrivalSpec{ArrivalKind::kProfile, 1, 1, 1}, seed);
    } else if (c.rate) {
      AddStream({static_cast<int>(i)}, ArrivalSpec{ArrivalKind::kPoisson, 1, *c.rate, 1}, seed);
    } else if (c.concurrency) {
      AddStream({static_cast<int>(i)}, ArrivalSpec{ArrivalKind::kClosedLoop, *c.concurrency, 1, 1}, seed);
    } else if (c.share > 0) {
      shared.push_back(static_cast<int>(i));
    }
  }
  if (!shared.empty()) AddStream(shared, load, w.seed * 1000003);
  if (load.kind == ArrivalKind::kTrace) budget_ = std::min<int64_t>(budget_, static_cast<int64_t>(w.trace.size()));
}

void RequestGenerator::AddStream(std::vector<int> classes, const ArrivalSpec& arrival, uint64_t seed) {
  Stream s;
  double total = 0;
  for (int c : classes) total += workload_.classes[c].share;
  double cum = 0;
  for (int c : classes) {
    cum += total > 0 ? workload_.classes[c].share / total : 1.0 / classes.size();
    s.cum_share.push_back(cum);
  }
  s.classes = std::move(classes);
  s.arrival = arrival;
  s.rng.seed(seed);
  const size_t index = streams_.size();
  if (arrival.kind == ArrivalKind::kClosedLoop) {
    for (int k = 0; k < arrival.concurrency; ++k) client_stream_.push_back(static_cast<int>(index));
  }
  streams_.push_back(std::move(s));
  if (arrival.kind != ArrivalKind::kClosedLoop) {
    streams_.back().next_t = 0;
    Advance(streams_.back());
  }
}

// Moves an open-loop stream to its next arrival time.
void RequestGenerator::Advance(Stream& s) {
  switch (s.arrival.kind) {
    case ArrivalKind::kPoisson:
      s.next_t += std::exponential_distribution<double>(s.arrival.rate)(s.rng);
      break;
    case ArrivalKind::kGamma: {
      // Shape b, mean 1 / rate: the coefficient of variation is 1 / sqrt(b).
      const double b = s.arrival.burstiness;
      s.next_t += std::gamma_distribution<double>(b, 1.0 / (s.arrival.rate * b))(s.rng);
      break;
    }
    case ArrivalKind::kTrace:
      s.next_t = s.trace_pos < workload_.trace.size() ? workload_.trace[s.trace_pos].t
                                                      : std::numeric_limits<double>::infinity();
      break;
    case ArrivalKind::kProfile:
      AdvanceProfile(s);
      break;
    case ArrivalKind::kBatch:  // every request at t = 0
    case ArrivalKind::kClosedLoop:
      break;
  }
}

// A Poisson process whose rate is the class's profile's in each step: an
// exponential gap at this step's rate, and where it would cross into the
// next step, a fresh draw from the boundary at the next step's rate (the
// process is memoryless, so this is exact).
void RequestGenerator::AdvanceProfile(Stream& s) {
  const std::vector<double>& rates = workload_.classes[s.classes[0]].profile;
  const double step = workload_.profile_step_s;
  double t = s.next_t;
  while (s.profile_step < rates.size()) {
    const double end = step * static_cast<double>(s.profile_step + 1);
    const double rate = rates[s.profile_step];
    if (rate > 0) {
      const double next = t + std::exponential_distribution<double>(rate)(s.rng);
      if (next < end) {
        s.next_t = next;
        return;
      }
    }
    t = end;
    ++s.profile_step;
  }
  s.next_t = std::numeric_limits<double>::infinity();
}

const RequestGenerator::Stream* RequestGenerator::NextOpenStream() const {
  const Stream* best = nullptr;
  for (const auto& s : streams_) {
    if (s.arrival.kind == ArrivalKind::kClosedLoop || !std::isfinite(s.next_t)) continue;
    if (!best || s.next_t < best->next_t) best = &s;
  }
  return best;
}

std::optional<double> RequestGenerator::NextOpenArrival() const {
  if (issued_ >= budget_) return std::nullopt;
  const Stream* s = NextOpenStream();
  if (!s) return std::nullopt;
  return s->next_t;
}

WorkItem RequestGenerator::Issue(Stream& s, double t, int forced_class, int64_t in, int64_t out) {
  int cls = forced_class;
  if (cls < 0) {
    const double u = std::uniform_real_distribution<double>(0.0, 1.0)(s.rng);
    const size_t k = std::lower_bound(s.cum_share.begin(), s.cum_share.end(), u) - s.cum_share.begin();
    cls = s.classes[std::min(k, s.classes.size() - 1)];
  }
  const RequestClass& c = workload_.classes[cls];
  WorkItem item;
  item.index = issued_++;
  item.t_arrival = t;
  item.class_index = cls;
  item.prompt_tokens = in > 0 ? in : c.prompt.Sample(s.rng);
  item.output_tokens = out > 0 ? out : c.output.Sample(s.rng);
  if (c.prefix_tokens > 0 && in <= 0) {  // a trace's lengths are whole prompts
    item.prefix_tokens = c.prefix_tokens;
    item.prompt_tokens += c.prefix_tokens;
    item.prefix_group = static_cast<int>(item.index % c.prefix_groups);
  }
  item.message_tokens = item.prompt_tokens - item.prefix_tokens;
  if (c.session) {
    item.session = item.index;
    item.turns = static_cast<int>(std::max<int64_t>(1, c.session->turns.Sample(s.rng)));
  }
  return item;
}

std::optional<WorkItem> RequestGenerator::NextTurn(const WorkItem& done, double t_done) {
  if (done.session < 0 || done.turn + 1 >= done.turns || issued_ >= budget_) return std::nullopt;
  const RequestClass& c = workload_.classes[done.class_index];
  WorkItem next = done;
  next.index = issued_++;
  next.t_arrival = t_done + (c.session ? c.session->think.Draw(turn_rng_) : 0);
  next.turn = done.turn + 1;
  next.first_wave = false;
  next.block_hashes.clear();
  next.history.emplace_back(done.message_tokens, done.output_tokens);
  next.message_tokens = c.prompt.Sample(turn_rng_);
  next.output_tokens = c.output.Sample(turn_rng_);
  next.prompt_tokens = next.prefix_tokens + next.message_tokens;
  for (const auto& [message, answer] : next.history) next.prompt_tokens += message + answer;
  return next;
}

std::vector<int32_t> PromptTokenIds(const WorkItem& item, uint64_t workload_seed, uint64_t salt) {
  // splitmix64 per position: distinct prompts share no block by accident (an
  // arithmetic sequence mod 128 would make every prompt a shift of one
  // another, and a prefix-caching server would find them in its cache).
  const auto mix = [](uint64_t z) {
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  };
  const auto token = [&](uint64_t stream, int64_t i) {
    return static_cast<int32_t>(100 + mix(stream + static_cast<uint64_t>(i + 1) * 0x9e3779b97f4a7c15ull) % 128);
  };
  const uint64_t seed = workload_seed * 0xd1b54a32d192ed03ull + salt * 0x8cb92ba72f3d8dd7ull;
  // A conversation's turns share their ids position by position: a turn's
  // prompt starts with the previous turn's (its answer's place then holds the
  // history's ids, which are not what the server generated: a cache finds the
  // previous prompt, as a served conversation's would).
  const uint64_t own = seed ^ (static_cast<uint64_t>(item.session >= 0 ? item.session : item.index) << 1);
  const uint64_t shared =
      seed ^ ((static_cast<uint64_t>(item.class_index) << 32 | static_cast<uint64_t>(item.prefix_group)) << 1 | 1);
  const int64_t hashed = static_cast<int64_t>(item.block_hashes.size()) * kMooncakeBlockTokens;
  std::vector<int32_t> ids(static_cast<size_t>(item.prompt_tokens));
  for (int64_t i = 0; i < item.prompt_tokens; ++i) {
    if (i < item.prefix_tokens) {
      ids[i] = token(shared, i);
    } else if (i < hashed) {  // the block's hash, not the request, picks its ids
      ids[i] = token(
          seed ^ mix(static_cast<uint64_t>(item.block_hashes[i / kMooncakeBlockTokens]) + 0x5851f42d4c957f2dull), i);
    } else {
      ids[i] = token(own, i);
    }
  }
  return ids;
}

WorkItem RequestGenerator::PopOpen() {
  Stream& s = const_cast<Stream&>(*NextOpenStream());
  const double t = s.next_t;
  WorkItem item;
  if (s.arrival.kind == ArrivalKind::kTrace) {
    const TraceRow& row = workload_.trace[s.trace_pos++];
    const int cls = row.request_class.empty() ? -1 : workload_.ClassIndex(row.request_class);
    item = Issue(s, t, cls, row.input_tokens, row.output_tokens);
    item.block_hashes = row.block_hashes;
  } else {
    item = Issue(s, t, -1, 0, 0);
  }
  Advance(s);
  return item;
}

std::optional<WorkItem> RequestGenerator::NextForClient(int client, double now) {
  if (issued_ >= budget_ || client < 0 || client >= closed_clients()) return std::nullopt;
  if (client_started_.size() < client_stream_.size()) client_started_.resize(client_stream_.size(), false);
  double t = now;
  if (client_started_[client]) t += workload_.client_think.Draw(think_rng_);
  WorkItem item = Issue(streams_[client_stream_[client]], t, -1, 0, 0);
  item.client = client;
  item.first_wave = !client_started_[client];
  client_started_[client] = true;
  return item;
}

}  // namespace goodput
