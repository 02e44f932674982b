// A workload: request classes (lengths, priority, SLO), how requests arrive,
// and which part of the run is measured.
//
// File format (YAML; JSON is accepted since it is YAML):
//   name: chat
//   seed: 1                      # same seed, same requests
//   requests: 2000               # how many requests the run sends
//   warmup: 10%                  # excluded from the measurement: a share of
//   cooldown: 10%                #   the requests, or a duration ("30s")
//   arrival:                     # the load; commands usually override it
//     type: closed               # closed | poisson | gamma | trace
//     concurrency: 32            # closed loop: clients, each sends on completion
//     think: 10ms-30ms           # closed loop: each client's pause before its next
//                                #   request (a duration, or a range drawn uniformly;
//                                #   kept when a command sets the load)
//     rate: 10                   # poisson / gamma: requests per second
//     burstiness: 0.5            # gamma shape: 1 = Poisson, < 1 burstier
//     file: trace.csv            # trace replay (see trace.h); relative to this file
//     skip_empty: false          # trace: leave out requests of zero length (failed ones)
//   profile_step: 1h             # or a day: each class's `profile` lists its rate
//                                #   (requests/s) per step of this length (day_profile.h)
//   classes:
//     - name: interactive
//       share: 0.8               # of the arrivals; or its own `rate` or `concurrency`
//       profile: [0.4, 0.3, ...] # with profile_step: its rate in each step instead
//       priority: 0              # lower runs first (as vLLM's priority)
//       offline: false           # offline classes have no SLO and yield to the others
//       session: {turns: fixed:4, think: 5s}  # conversations: each request starts one;
//                                #   a turn follows `think` (a duration or a range) after
//                                #   the answer, its prompt the whole history (prompt =
//                                #   each turn's new message)
//       prompt: lognormal:1k,0.8 # LengthDistribution specs, or {file: lengths.txt}
//       output: lognormal:250,0.6
//       slo: ttft p99 <= 1s, tpot p99 <= 100ms
#pragma once

#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "core/slo.h"
#include "core/status.h"
#include "workload/length_dist.h"
#include "workload/trace.h"

namespace goodput {

// A pause between an answer and the next request (a closed-loop client's, or
// a conversation's next turn), drawn uniformly from [min_s, max_s] (both 0:
// at once): a user reading, or a client's own work between requests.
struct ThinkTime {
  double min_s = 0, max_s = 0;
  bool any() const { return max_s > 0; }
  // The pause for one request; consumes nothing from `rng` when the time is
  // fixed, so a fixed think time leaves the other draws where they were.
  double Draw(std::mt19937_64& rng) const {
    return max_s > min_s ? std::uniform_real_distribution<double>(min_s, max_s)(rng) : min_s;
  }
};

// The longest think time a workload may give (a larger figure is a typo).
constexpr double kMaxThinkSeconds = 3600;

// Multi-turn conversations: a request of the class starts one of `turns`
// turns; each next turn is sent `think` after the previous answer ended,
// its prompt the shared prefix, every earlier message and answer, and its
// own new message.
struct SessionSpec {
  LengthDistribution turns;
  ThinkTime think;
};

struct RequestClass {
  std::string name;
  double share = 1;                  // relative share of the shared arrival stream
  std::optional<double> rate;        // its own open-loop rate instead (requests/s)
  std::optional<int> concurrency;    // its own closed-loop clients instead
  std::vector<double> profile;       // with Workload::profile_step_s: its rate in each step
  int priority = 0;
  bool offline = false;
  // A shared prefix (a system prompt, a document asked about several times):
  // `prefix_tokens` tokens, in `prefix_groups` variants, before each request's
  // own prompt (`prompt` is then the length after the prefix).
  int64_t prefix_tokens = 0;
  int prefix_groups = 1;
  LengthDistribution prompt;
  LengthDistribution output;
  std::optional<ClassSlo> slo;
  std::optional<SessionSpec> session;
};

// kBatch: every request arrives at t = 0 (an offline batch, measured by how
// fast it drains). kProfile: each class at its rate of the moment, from its
// profile (day_profile.h).
enum class ArrivalKind { kClosedLoop, kPoisson, kGamma, kTrace, kBatch, kProfile };
const char* ArrivalKindName(ArrivalKind k);
// The kind ArrivalKindName calls `name`; nullopt for any other name.
std::optional<ArrivalKind> ArrivalKindFromName(const std::string& name);

struct ArrivalSpec {
  ArrivalKind kind = ArrivalKind::kClosedLoop;
  int concurrency = 1;
  double rate = 1;        // requests / s
  double burstiness = 1;  // gamma shape parameter
};

// Warm-up or cool-down: a share of the requests or a duration.
struct Margin {
  double fraction = 0;                  // of the requests
  std::optional<double> seconds;        // or this long
};

// The most requests a run may send: records of a few hundred bytes each, and
// far beyond a day of measurement (a larger figure is a typo, not a plan).
constexpr int64_t kMaxRequests = 1'000'000;

// The most closed-loop clients a load may have: 100k, one connection each (a
// workload's class or arrival, or a command's --concurrency).
constexpr int kMaxConcurrency = 100'000;

// The open-loop rates a load may have (requests/s; a workload's class or
// arrival, or a command's --rate): one request in three hours to a million a
// second. Beyond them a figure is a typo.
constexpr double kMinRate = 1e-4, kMaxRate = 1e6;

// The most turns a conversation may have (a typo of thousands is an error).
constexpr int kMaxSessionTurns = 1000;

struct Workload {
  std::string name;
  uint64_t seed = 1;
  int64_t requests = 1000;
  Margin warmup, cooldown;
  ArrivalSpec arrival;
  ThinkTime client_think;  // closed-loop clients (arrival.think)
  std::vector<RequestClass> classes;
  std::vector<TraceRow> trace;  // for ArrivalKind::kTrace
  double profile_step_s = 0;    // > 0: the classes' rates follow their profiles (ArrivalKind::kProfile)

  bool HasProfile() const { return profile_step_s > 0; }
  size_t ProfileSteps() const { return classes.empty() ? 0 : classes[0].profile.size(); }
  double ProfileEnd() const { return profile_step_s * static_cast<double>(ProfileSteps()); }

  // The classes' SLOs as one spec (classes without one are left out).
  SloSpec Slo() const;
  int ClassIndex(const std::string& name) const;  // -1 when unknown
};

// Parses a workload document; `where` names it in errors (a path), and
// relative file references resolve against `base_dir`.
Result<Workload> ParseWorkload(const std::string& yaml_text, const std::string& where, const std::string& base_dir);

// Reads a workload file.
Result<Workload> LoadWorkload(const std::string& path);

// The workload of repetition `repetition` (1, 2, ...): the same workload with
// its seed moved by repetition - 1, so that repetition 1 is the file's seed.
// The simulator and the load generator both draw their requests from this.
Workload ForRepetition(const Workload& w, uint64_t repetition);

// One class of fixed lengths, closed-loop arrivals, no warm-up: for tests and
// benchmarks of the measurement machinery itself.
Workload FixedLengthWorkload(int64_t requests, int64_t prompt_tokens, int64_t output_tokens,
                             const std::string& class_name = "default");

// Replaces the classes' SLOs by `slo` (per class name, or "*" for all
// classes that are not offline). Unknown class names are an error.
Status ApplySlo(Workload& w, const SloSpec& slo);

}  // namespace goodput
