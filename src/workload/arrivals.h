// Turns a workload into the requests of one run: when each arrives, its class
// and its lengths. Seeded: the same workload, load and seed give the same
// requests.
#pragma once

#include <cstdint>
#include <optional>
#include <random>
#include <utility>
#include <vector>

#include "workload/workload.h"

namespace goodput {

struct WorkItem {
  int64_t index = 0;      // issue order, from 0
  double t_arrival = 0;   // seconds on the run's clock
  int class_index = 0;
  int64_t prompt_tokens = 0;
  int64_t output_tokens = 0;
  int client = -1;        // closed-loop client that sent it; -1 for open-loop arrivals
  bool first_wave = false;  // a closed-loop client's first request (the run's warm-up by order of admission)
  int64_t prefix_tokens = 0;  // the first prefix_tokens of the prompt are the class's shared prefix
  int prefix_group = 0;       // which of the class's prefixes
  // A replayed trace's block hashes (Mooncake's hash_ids), one per
  // kMooncakeBlockTokens tokens of the prompt: blocks of equal hash get equal
  // token ids, so a prefix cache finds what the recorded service found.
  std::vector<int64_t> block_hashes;
  // A conversation's turn (the class has a session): its conversation (the
  // index of its first request), which turn (0 first) of how many, and the
  // history its prompt carries after the shared prefix: each earlier turn's
  // message and answer lengths, in order. prompt_tokens is the prefix, the
  // history and this turn's own message.
  int64_t session = -1;
  int turn = 0;
  int turns = 1;
  std::vector<std::pair<int64_t, int64_t>> history;
  int64_t message_tokens = 0;
};

// The prompt's token ids for a request: the class's shared prefix (the same
// ids for every request of its group), or the trace's hashed blocks (the same
// ids wherever the hash is the same), then ids of its own (of its
// conversation's: a turn's prompt begins with the previous turn's); `salt` changes
// them all (a new run on the same server starts from a cold prefix cache).
// Ids lie in [100, 228), valid in every vocabulary goodput serves.
std::vector<int32_t> PromptTokenIds(const WorkItem& item, uint64_t workload_seed, uint64_t salt = 0);

class RequestGenerator {
 public:
  // `load` replaces the workload's own arrival spec (commands sweep it).
  // Classes with their own rate or concurrency keep it.
  // The generator keeps a reference to `workload`, which must outlive it.
  RequestGenerator(const Workload& workload, const ArrivalSpec& load);
  RequestGenerator(Workload&&, const ArrivalSpec&) = delete;

  // The next open-loop arrival time, if any remains within the budget.
  std::optional<double> NextOpenArrival() const;
  // Issues that arrival. Requires NextOpenArrival().
  WorkItem PopOpen();

  // Closed-loop clients of this run (their requests are issued on demand).
  int closed_clients() const { return static_cast<int>(client_stream_.size()); }
  // The next request of `client`, whose last one ended at `now`: sent then, or
  // after the workload's think time (drawn for every request but a client's
  // first); empty once the budget is spent.
  std::optional<WorkItem> NextForClient(int client, double now);

  // The turn after `done` (answered at `t_done`) of its conversation, sent
  // the class's think time later (drawn from its range) with `done`'s answer
  // in its history (and its client, if any); empty when the conversation
  // ended or the budget is spent. Whoever sends requests calls it when one
  // ends well.
  std::optional<WorkItem> NextTurn(const WorkItem& done, double t_done);

  int64_t issued() const { return issued_; }
  int64_t budget() const { return budget_; }

 private:
  struct Stream {
    std::vector<int> classes;      // candidates, chosen by share
    std::vector<double> cum_share;
    ArrivalSpec arrival;
    std::mt19937_64 rng;
    double next_t = 0;             // open loop: next arrival time
    size_t trace_pos = 0;
    size_t profile_step = 0;  // kProfile: the step next_t lies in
  };
  void AddStream(std::vector<int> classes, const ArrivalSpec& arrival, uint64_t seed);
  WorkItem Issue(Stream& s, double t, int forced_class, int64_t in, int64_t out);
  void Advance(Stream& s);
  void AdvanceProfile(Stream& s);
  const Stream* NextOpenStream() const;

  const Workload& workload_;
  std::vector<Stream> streams_;
  std::vector<int> client_stream_;  // closed-loop client -> stream
  std::vector<bool> client_started_;  // closed-loop client -> has issued a request
  std::mt19937_64 turn_rng_;          // the lengths of conversations' later turns
  std::mt19937_64 think_rng_;         // closed-loop clients' think times
  int64_t issued_ = 0;
  int64_t budget_ = 0;
};

}  // namespace goodput
