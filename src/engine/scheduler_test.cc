// Exact small cases of the scheduler: budgets, chunking, class order,
// preemption order, speculative decoding and block accounting.
#include "engine/scheduler.h"

#include <gtest/gtest.h>

namespace goodput {
namespace {

using Type = KvGroupSpec::Type;

Request Req(RequestId id, int64_t prompt, int64_t out, double arrival = 0, bool offline = false, int priority = 0) {
  Request r;
  r.id = id;
  r.num_prompt_tokens = prompt;
  r.sampling.max_tokens = out;
  r.sampling.ignore_eos = true;
  r.arrival_time = arrival;
  r.offline = offline;
  r.priority = priority;
  return r;
}

// Samples one token (or `accepted + 1` with drafts) for every sampling request.
StepResult SampleAll(const StepPlan& plan, int32_t accepted_drafts = 0) {
  StepResult r;
  for (const auto& s : plan.requests) {
    if (!s.samples) continue;
    const int32_t n = std::min(s.num_draft, accepted_drafts) + 1;
    // A request with token ids gets ids for its outputs (id 1).
    r.sampled.push_back({s.id, n, s.token_ids.empty() ? std::vector<int32_t>{} : std::vector<int32_t>(n, 1), {}});
  }
  return r;
}

// Resolved sizes (as ResolveEngineDefaults leaves them) large enough not to
// bind unless a test says otherwise.
SchedulerConfig Config() {
  SchedulerConfig c;
  c.max_num_batched_tokens = 8192;
  c.max_num_seqs = 256;
  c.max_model_len = 131072;
  return c;
}

struct Harness {
  explicit Harness(SchedulerConfig c, int64_t blocks = 1000, int64_t block_size = 4, bool prefix_caching = false)
      : kv({{Type::kFull, block_size, 0}}, blocks, prefix_caching), sched(c, &kv, nullptr) {}
  // One step; returns {id: num_new} in plan order.
  std::vector<std::pair<RequestId, int32_t>> Step(int32_t accepted = 0) {
    const StepPlan& p = sched.Schedule();
    std::vector<std::pair<RequestId, int32_t>> out;
    for (const auto& s : p.requests) out.emplace_back(s.id, s.num_new);
    last_preempted = p.preempted;
    last_plan = p.requests;
    auto events = sched.Update(p, SampleAll(p, accepted));
    for (const auto& e : events) {
      if (e.finished) finished.push_back(e.id);
    }
    return out;
  }
  KvCacheManager kv;
  Scheduler sched;
  std::vector<RequestId> finished;
  std::vector<RequestId> last_preempted;
  std::vector<ScheduledRequest> last_plan;
};

using Plan = std::vector<std::pair<RequestId, int32_t>>;

TEST(Scheduler, ChunkedPrefillUnderTheTokenBudget) {
  SchedulerConfig c = Config();
  c.max_num_batched_tokens = 10;
  Harness h(c);
  ASSERT_FALSE(h.sched.Add(Req(1, 25, 3)).has_value());
  EXPECT_EQ(h.Step(), (Plan{{1, 10}}));
  EXPECT_EQ(h.Step(), (Plan{{1, 10}}));
  EXPECT_EQ(h.Step(), (Plan{{1, 5}}));  // the last chunk samples the first token
  EXPECT_EQ(h.sched.Find(1)->num_output_tokens, 1);
  EXPECT_EQ(h.Step(), (Plan{{1, 1}}));
  EXPECT_EQ(h.Step(), (Plan{{1, 1}}));
  EXPECT_EQ(h.finished, (std::vector<RequestId>{1}));
  EXPECT_EQ(h.kv.free_blocks(), 1000);
}

// A request whose prompt's KV came from a prefill instance holds blocks for
// the whole prompt at once and computes only its last token (the first output
// needs its logits); preempted, it computes everything here.
TEST(Scheduler, ExternallyComputedPromptIsAdmittedWithItsBlocks) {
  SchedulerConfig c = Config();
  c.max_num_batched_tokens = 10;
  Harness h(c);
  Request r = Req(1, 25, 2);
  r.num_external_computed_tokens = 25;
  h.sched.Add(r);
  EXPECT_EQ(h.Step(), (Plan{{1, 1}}));  // 24 tokens arrived, 1 computed: the first output
  EXPECT_EQ(h.last_plan[0].num_computed, 24);
  EXPECT_EQ(h.kv.free_blocks(), 1000 - 7);  // 26 tokens of 4-token blocks after the output
  EXPECT_EQ(h.Step(), (Plan{{1, 1}}));
  EXPECT_EQ(h.finished, (std::vector<RequestId>{1}));

  Harness tight(c, 10);  // 40 tokens: the 33-token request and little else
  Request a = Req(2, 25, 8), b = Req(3, 12, 8, 1.0);
  a.num_external_computed_tokens = 25;
  tight.sched.Add(a);
  EXPECT_EQ(tight.Step(), (Plan{{2, 1}}));
  tight.sched.Add(b);
  for (int i = 0; i < 4 && tight.last_preempted.empty(); ++i) tight.Step();
  ASSERT_EQ(tight.last_preempted, (std::vector<RequestId>{3}));  // the newer one gives way
  EXPECT_EQ(tight.sched.Find(3)->num_computed_tokens, 0);
}

// A disaggregated prefill keeps its blocks past its end until the decode
// side has read them; an aborted one does not.
TEST(Scheduler, AHeldPrefillKeepsItsBlocksUntilReleased) {
  Harness h(Config());
  Request r = Req(1, 25, 1);
  r.hold_kv_after_finish = true;
  h.sched.Add(r);
  h.Step();
  EXPECT_EQ(h.finished, (std::vector<RequestId>{1}));
  EXPECT_EQ(h.kv.free_blocks(), 1000 - 7);  // 26 tokens in 4-token blocks, still taken
  h.sched.ReleaseKv(1);
  EXPECT_EQ(h.kv.free_blocks(), 1000);
  Request a = Req(2, 25, 5);
  a.hold_kv_after_finish = true;
  h.sched.Add(a);
  h.Step();
  EXPECT_TRUE(h.sched.Abort(2));
  EXPECT_EQ(h.kv.free_blocks(), 1000);
}

// A budget of 10: request 1 (8 tokens), then 2 and 3 (6 each) arrive; the
// first four steps' plans under `c`. A prompt over the budget never runs.
std::vector<Plan> ThreePromptsUnderABudgetOfTen(SchedulerConfig c) {
  c.max_num_batched_tokens = 10;
  Harness h(c);
  h.sched.Add(Req(1, 8, 3));
  std::vector<Plan> plans{h.Step()};
  h.sched.Add(Req(2, 6, 3, 1.0));
  h.sched.Add(Req(3, 6, 3, 2.0));
  for (int i = 0; i < 3; ++i) plans.push_back(h.Step());
  EXPECT_TRUE(h.sched.Add(Req(4, 11, 3)).has_value());
  return plans;
}

// vLLM V0 without chunked prefill: a step that admits computes whole
// prompts only, and the running requests' decodes wait for the next step.
// TensorRT-LLM without chunked context: a prompt enters a step whole beside
// the decodes, or waits for a step with room.
TEST(Scheduler, WholePromptsFirstOrBesideTheDecodes) {
  SchedulerConfig c = Config();
  c.prefill_first = true;
  c.chunked_prefill = false;
  EXPECT_EQ(ThreePromptsUnderABudgetOfTen(c),
            (std::vector<Plan>{{{1, 8}},
                               {{2, 6}},  // 1 does not decode; 3's whole prompt does not fit beside 2's
                               {{3, 6}},
                               {{1, 1}, {2, 1}, {3, 1}}}));
  c.prefill_first = false;
  EXPECT_EQ(ThreePromptsUnderABudgetOfTen(c),
            (std::vector<Plan>{{{1, 8}},
                               {{1, 1}, {2, 6}},  // 3's 6 tokens do not fit the 3 left; not split
                               {{1, 1}, {2, 1}, {3, 6}},
                               {{2, 1}, {3, 1}}}));

  c.prefill_first = true;
  c.max_num_batched_tokens = 10;
  c.max_offline_seqs = 1;  // an offline request held by its cap does not hold up the one behind it
  Harness capped(c);
  capped.sched.Add(Req(5, 4, 3, 0, /*offline=*/true));
  EXPECT_EQ(capped.Step(), (Plan{{5, 4}}));
  capped.sched.Add(Req(6, 4, 3, 1, /*offline=*/true));
  capped.sched.Add(Req(7, 4, 3, 2));
  EXPECT_EQ(capped.Step(), (Plan{{7, 4}}));
}

// SGLang's order: prompts before decodes, in chunks of the budget, a chunked
// prompt's next chunk before any new prompt; the decodes wait for a step with
// no prompt to compute. Budget 10: 1's 8 tokens, then 2 (16) and 3 (6) arrive.
TEST(Scheduler, PromptsBeforeDecodesInChunks) {
  SchedulerConfig c = Config();
  c.prefill_first = true;
  c.max_num_batched_tokens = 10;
  Harness h(c);
  h.sched.Add(Req(1, 8, 3));
  EXPECT_EQ(h.Step(), (Plan{{1, 8}}));
  h.sched.Add(Req(2, 16, 3, 1.0));
  h.sched.Add(Req(3, 6, 3, 2.0));
  EXPECT_EQ(h.Step(), (Plan{{2, 10}}));         // 1 does not decode
  EXPECT_EQ(h.Step(), (Plan{{2, 6}, {3, 4}}));  // 2's last chunk first, then 3's first
  EXPECT_EQ(h.Step(), (Plan{{3, 2}}));          // a prompt to finish: still no decodes
  EXPECT_EQ(h.Step(), (Plan{{1, 1}, {2, 1}, {3, 1}}));
  EXPECT_FALSE(h.sched.Add(Req(4, 11, 3)).has_value());  // chunked: a prompt over the budget runs
}

// SGLang's --scheduler-recv-interval 3: while 1 decodes, a request that
// arrives is taken in only once three decode steps have passed since the
// last intake; the prompt step that admits it restarts the count; an idle
// engine takes an arrival in at once; one aborted before intake is gone.
TEST(Scheduler, ArrivalsWaitForTheReceiveInterval) {
  SchedulerConfig c = Config();
  c.prefill_first = true;
  c.recv_interval = 3;
  Harness h(c);
  h.sched.Add(Req(1, 8, 20));
  EXPECT_EQ(h.Step(), (Plan{{1, 8}}));  // idle: taken in at once
  EXPECT_EQ(h.Step(), (Plan{{1, 1}}));  // count 1 after it
  h.sched.Add(Req(2, 4, 20, 1.0));
  EXPECT_EQ(h.sched.num_waiting(), 1u);
  EXPECT_EQ(h.Step(), (Plan{{1, 1}}));  // count 2: 2 not yet seen
  EXPECT_EQ(h.Step(), (Plan{{1, 1}}));  // count 3 after it
  EXPECT_EQ(h.Step(), (Plan{{2, 4}}));  // taken in, admitted: prompts first
  h.sched.Add(Req(3, 4, 20, 2.0));
  EXPECT_EQ(h.Step(), (Plan{{3, 4}}));  // after a prompt step, at the next pass
  h.sched.Add(Req(4, 4, 20, 3.0));
  EXPECT_TRUE(h.sched.Abort(4));
  EXPECT_EQ(h.sched.num_waiting(), 0u);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(h.Step(), (Plan{{1, 1}, {2, 1}, {3, 1}}));
  h.sched.Add(Req(5, 4, 20, 4.0));
  EXPECT_EQ(h.Step(), (Plan{{5, 4}}));  // three decode steps passed while none waited: at once
  c.recv_interval = 1;                  // vLLM's: every pass
  Harness every(c);
  every.sched.Add(Req(1, 8, 20));
  EXPECT_EQ(every.Step(), (Plan{{1, 8}}));
  every.sched.Add(Req(2, 4, 20, 1.0));
  EXPECT_EQ(every.Step(), (Plan{{2, 4}}));
}

// TensorRT-LLM's GUARANTEED_NO_EVICT: a request is admitted only while the
// free blocks also hold what every running request needs to reach its max
// tokens. Blocks of 4: request 1 (8 + 10 tokens) needs 5 blocks to its end,
// request 2 (4 + 10) 4; a pool of 6 holds one at a time, so 2 waits for 1
// and nobody is preempted (vLLM's admission preempts 2 in the same pool:
// PreemptedRequestRestartsWithItsOutputs); a pool of 9 holds both.
TEST(Scheduler, GuaranteedNoEvictAdmitsOnlyWithBlocksToTheEnd) {
  SchedulerConfig c = Config();
  c.guaranteed_no_evict = true;
  Harness h(c, /*blocks=*/6);
  h.sched.Add(Req(1, 8, 10, 0.0));
  h.sched.Add(Req(2, 4, 10, 0.1));
  EXPECT_EQ(h.Step(), (Plan{{1, 8}}));
  for (int i = 0; i < 9; ++i) EXPECT_EQ(h.Step(), (Plan{{1, 1}})) << "decode " << i;
  EXPECT_EQ(h.finished, (std::vector<RequestId>{1}));
  EXPECT_EQ(h.Step(), (Plan{{2, 4}}));
  EXPECT_EQ(h.sched.num_preemptions(), 0);

  Harness both(c, /*blocks=*/9);
  both.sched.Add(Req(1, 8, 10, 0.0));
  both.sched.Add(Req(2, 4, 10, 0.1));
  EXPECT_EQ(both.Step(), (Plan{{1, 8}, {2, 4}}));
  while (both.sched.HasWork()) both.Step();
  EXPECT_EQ(both.sched.num_preemptions(), 0);
  EXPECT_EQ(both.kv.free_blocks(), 9);
}

// vLLM V0's multi-step scheduling: a step of decodes alone starts a run of
// num_scheduler_steps steps over the same requests; a request arriving within
// the run waits for its end, then is admitted by the next pass. A run whose
// requests all finish ends early.
TEST(Scheduler, MultiStepRunsAdmitNothingUntilTheirEnd) {
  SchedulerConfig c = Config();
  c.prefill_first = true;
  c.chunked_prefill = false;
  c.num_scheduler_steps = 3;
  Harness h(c);
  h.sched.Add(Req(1, 4, 10));
  EXPECT_EQ(h.Step(), (Plan{{1, 4}}));  // a prefill step is a step alone
  EXPECT_EQ(h.Step(), (Plan{{1, 1}}));  // the run's first step
  h.sched.Add(Req(2, 4, 10, 1.0));
  EXPECT_EQ(h.Step(), (Plan{{1, 1}}));  // 2 waits
  EXPECT_EQ(h.Step(), (Plan{{1, 1}}));
  EXPECT_EQ(h.Step(), (Plan{{2, 4}}));  // the run over, the next pass admits 2
  EXPECT_EQ(h.Step(), (Plan{{1, 1}, {2, 1}}));

  c.num_scheduler_steps = 5;
  Harness early(c);
  early.sched.Add(Req(3, 4, 2));  // its prefill's token, then one decode: done
  EXPECT_EQ(early.Step(), (Plan{{3, 4}}));
  EXPECT_EQ(early.Step(), (Plan{{3, 1}}));
  early.sched.Add(Req(4, 4, 2, 1.0));
  EXPECT_EQ(early.Step(), (Plan{{4, 4}}));  // 3 finished: the run ended with it
}

TEST(Scheduler, DecodesGoFirstThenNewPrefillsTakeWhatIsLeft) {
  SchedulerConfig c = Config();
  c.max_num_batched_tokens = 8;
  Harness h(c);
  h.sched.Add(Req(1, 4, 10));
  EXPECT_EQ(h.Step(), (Plan{{1, 4}}));
  h.sched.Add(Req(2, 20, 10, 1.0));
  EXPECT_EQ(h.Step(), (Plan{{1, 1}, {2, 7}}));  // decode of 1, then 7 of 2's prompt
}

TEST(Scheduler, LongPrefillThresholdSharesTheStep) {
  SchedulerConfig c = Config();
  c.max_num_batched_tokens = 100;
  c.long_prefill_token_threshold = 4;
  Harness h(c);
  h.sched.Add(Req(1, 8, 2));
  h.sched.Add(Req(2, 8, 2, 0.1));
  EXPECT_EQ(h.Step(), (Plan{{1, 4}, {2, 4}}));
  EXPECT_EQ(h.Step(), (Plan{{1, 4}, {2, 4}}));
}

TEST(Scheduler, SequenceCapMakesRequestsWait) {
  SchedulerConfig c = Config();
  c.max_num_seqs = 2;
  Harness h(c);
  for (int i = 1; i <= 3; ++i) h.sched.Add(Req(i, 4, 2, i));
  EXPECT_EQ(h.Step(), (Plan{{1, 4}, {2, 4}}));
  EXPECT_EQ(h.sched.num_waiting(), 1u);
  EXPECT_EQ(h.Step(), (Plan{{1, 1}, {2, 1}}));  // both finish (2 tokens each)
  EXPECT_EQ(h.Step(), (Plan{{3, 4}}));
}

TEST(Scheduler, FcfsIgnoresClassesPriorityOrdersThem) {
  SchedulerConfig c = Config();
  c.max_num_seqs = 1;
  Harness fcfs(c);
  fcfs.sched.Add(Req(1, 4, 1, 0.0, /*offline=*/true));
  fcfs.sched.Add(Req(2, 4, 1, 1.0));
  EXPECT_EQ(fcfs.Step(), (Plan{{1, 4}}));  // the older offline request first
  c.policy = SchedulingPolicy::kPriority;
  Harness prio(c);
  prio.sched.Add(Req(1, 4, 1, 0.0, true));
  prio.sched.Add(Req(2, 4, 1, 1.0));
  prio.sched.Add(Req(3, 4, 1, 0.5, false, /*priority=*/5));
  EXPECT_EQ(prio.Step(), (Plan{{2, 4}}));  // interactive, priority 0
  EXPECT_EQ(prio.Step(), (Plan{{3, 4}}));  // interactive, priority 5
  EXPECT_EQ(prio.Step(), (Plan{{1, 4}}));  // offline last
}

TEST(Scheduler, InteractiveTakesTheSeatOfTheNewestOffline) {
  SchedulerConfig c = Config();
  c.policy = SchedulingPolicy::kPriority;
  c.max_num_seqs = 2;
  Harness h(c);
  h.sched.Add(Req(1, 4, 50, 0.0, true));
  h.sched.Add(Req(2, 4, 50, 0.1, true));
  h.Step();
  h.sched.Add(Req(3, 4, 50, 1.0));
  // No seat is free: offline 2 (the newest) leaves this step's plan and waits.
  EXPECT_EQ(h.Step(), (Plan{{1, 1}, {3, 4}}));
  EXPECT_EQ(h.last_preempted, (std::vector<RequestId>{2}));
  EXPECT_EQ(h.sched.Find(2)->num_computed_tokens, 0);
}

// 6 blocks of 4 tokens. Three requests of 8-token prompts take 2 blocks each;
// when they grow, the scheduler must preempt: the offline one first, then the
// lowest priority, then the newest.
TEST(Scheduler, PreemptionOrder) {
  SchedulerConfig c = Config();
  c.policy = SchedulingPolicy::kPriority;
  Harness h(c, /*blocks=*/6);
  h.sched.Add(Req(1, 8, 12, 0.0, false, 1));
  h.sched.Add(Req(2, 8, 12, 0.1, false, 0));
  h.sched.Add(Req(3, 8, 12, 0.2, true, 0));
  EXPECT_EQ(h.Step(), (Plan{{2, 8}, {1, 8}, {3, 8}}));
  h.Step();  // 9 tokens each: 2 needs a third block -> offline 3 goes
  EXPECT_EQ(h.last_preempted, (std::vector<RequestId>{3}));
  for (int i = 0; i < 4; ++i) h.Step();  // up to 13 tokens: 2 needs a 4th block -> lower priority 1 goes
  EXPECT_EQ(h.last_preempted, (std::vector<RequestId>{1}));
  EXPECT_EQ(h.sched.num_preemptions(), 2);
  const Request* r1 = h.sched.Find(1);
  EXPECT_EQ(r1->num_computed_tokens, 0);
  EXPECT_GT(r1->num_output_tokens, 0);  // keeps its tokens; recomputes them
}

TEST(Scheduler, PreemptedRequestRestartsWithItsOutputs) {
  SchedulerConfig c = Config();
  Harness h(c, /*blocks=*/6);
  h.sched.Add(Req(1, 8, 10, 0.0));
  h.sched.Add(Req(2, 4, 10, 0.1));
  // Blocks of 4: step 1 prefills (2 + 1 blocks), step 2 computes positions 8
  // and 4 (3 + 2 blocks), steps 3-5 fill those blocks, and in step 6 request 1
  // takes the last block for position 12, so 2 (the newest) cannot grow.
  for (int i = 0; i < 5; ++i) h.Step();
  EXPECT_TRUE(h.last_preempted.empty());
  h.Step();
  EXPECT_EQ(h.last_preempted, (std::vector<RequestId>{2}));
  const int64_t outputs = h.sched.Find(2)->num_output_tokens;
  // Once 1 finishes, 2 comes back and recomputes prompt + outputs in one chunk.
  while (h.sched.Find(1)) h.Step();
  auto plan = h.Step();
  ASSERT_EQ(plan.size(), 1u);
  EXPECT_EQ(plan[0].second, 4 + outputs);
}

TEST(Scheduler, OfflineCap) {
  SchedulerConfig c = Config();
  c.policy = SchedulingPolicy::kPriority;
  c.max_offline_seqs = 1;
  Harness h(c);
  h.sched.Add(Req(1, 4, 5, 0.0, true));
  h.sched.Add(Req(2, 4, 5, 0.1, true));
  h.sched.Add(Req(3, 4, 5, 0.2));
  EXPECT_EQ(h.Step(), (Plan{{3, 4}, {1, 4}}));
  EXPECT_EQ(h.sched.num_waiting(), 1u);
}

// k = 3 drafts: a decode step computes 1 + 3 tokens; with 2 accepted it
// produces 3 tokens and keeps the KV of the last token and 2 drafts.
TEST(Scheduler, SpeculativeDecodingCountsDraftsInBudgetAndKv) {
  SchedulerConfig c = Config();
  c.num_speculative_tokens = 3;
  Harness h(c);
  h.sched.Add(Req(1, 8, 100));
  EXPECT_EQ(h.Step(2), (Plan{{1, 8}}));  // prefill samples 1 token
  EXPECT_EQ(h.Step(2), (Plan{{1, 4}}));
  const Request* r = h.sched.Find(1);
  EXPECT_EQ(r->num_output_tokens, 1 + 3);
  EXPECT_EQ(r->num_computed_tokens, 8 + 1 + 2);
  EXPECT_EQ(r->num_tokens() - r->num_computed_tokens, 1);
  // Drafts stop at max_tokens: with one token left to produce, none are proposed.
  h.sched.Add(Req(2, 8, 2, 1.0));
  EXPECT_EQ(h.Step(2).back(), (std::pair<RequestId, int32_t>{2, 8}));
  EXPECT_EQ(h.Step(2).back(), (std::pair<RequestId, int32_t>{2, 1}));
}

TEST(Scheduler, RejectsWhatCanNeverRun) {
  SchedulerConfig c = Config();
  c.max_model_len = 100;
  Harness h(c, /*blocks=*/10, /*block_size=*/4);
  auto too_long = h.sched.Add(Req(1, 100, 5));
  ASSERT_TRUE(too_long.has_value());
  EXPECT_EQ(too_long->reason, FinishReason::kRejected);
  EXPECT_TRUE(h.sched.Add(Req(2, 60, 5)).has_value());  // 65 tokens need 17 blocks of 10
  EXPECT_FALSE(h.sched.Add(Req(3, 30, 5)).has_value());
  EXPECT_TRUE(h.sched.Add(Req(3, 30, 5)).has_value());  // duplicate id
}

TEST(Scheduler, AbortFreesEveryBlock) {
  SchedulerConfig c = Config();
  Harness h(c, 100);
  for (int i = 1; i <= 5; ++i) h.sched.Add(Req(i, 20, 50, i));
  h.Step();
  h.Step();
  EXPECT_LT(h.kv.free_blocks(), 100);
  for (int i = 1; i <= 5; ++i) EXPECT_TRUE(h.sched.Abort(i));
  EXPECT_FALSE(h.sched.Abort(1));
  EXPECT_EQ(h.kv.free_blocks(), 100);
  EXPECT_FALSE(h.sched.HasWork());
  const StepPlan& p = h.sched.Schedule();
  EXPECT_EQ(p.released.size(), 5u);  // the runner hears which requests to drop
}

TEST(Scheduler, NoBlockLeakedUnderPressure) {
  SchedulerConfig c = Config();
  c.max_num_batched_tokens = 32;
  Harness h(c, /*blocks=*/40);
  for (int i = 1; i <= 30; ++i) h.sched.Add(Req(i, 10 + i % 7 * 5, 5 + i % 11, i * 0.01));
  int steps = 0;
  while (h.sched.HasWork() && steps++ < 10000) h.Step();
  EXPECT_FALSE(h.sched.HasWork());
  EXPECT_EQ(h.finished.size(), 30u);
  EXPECT_GT(h.sched.num_preemptions(), 0);
  EXPECT_EQ(h.kv.free_blocks(), 40);
}

// A predictor charging 1 ms per token: with a 10 ms step target the offline
// request's prefill chunk shrinks to what the step can still take.
class PerToken : public StepTimePredictor {
 public:
  void Begin() override { tokens_ = 0; }
  void Add(int64_t, int64_t n, bool) override { tokens_ += n; }
  double SecondsWith(int64_t, int64_t n, bool) const override { return 0.001 * static_cast<double>(tokens_ + n); }

 private:
  int64_t tokens_ = 0;
};

TEST(Scheduler, SloPolicyKeepsOfflineWithinTheStepTarget) {
  SchedulerConfig c = Config();
  c.policy = SchedulingPolicy::kSlo;
  c.slo_step_target = 0.010;
  PerToken predictor;
  KvCacheManager kv({{Type::kFull, 4, 0}}, 1000);
  Scheduler s(c, &kv, &predictor);
  s.Add(Req(1, 4, 100));
  const StepPlan& first = s.Schedule();
  s.Update(first, SampleAll(first));
  s.Add(Req(2, 400, 10, 1.0, /*offline=*/true));
  const StepPlan& p = s.Schedule();
  ASSERT_EQ(p.requests.size(), 2u);
  EXPECT_EQ(p.requests[0].num_new, 1);  // the interactive decode
  EXPECT_LE(p.requests[1].num_new, 9);  // offline: at most 9 more ms
  EXPECT_GT(p.requests[1].num_new, 0);
}

// A request whose prompt starts with blocks a finished request left in the
// cache is admitted with them computed: it prefills only the rest, and the
// runner is told to start it afresh all the same.
TEST(Scheduler, PrefixCacheHitSkipsTheCachedBlocks) {
  Harness h(Config(), 1000, 4, /*prefix_caching=*/true);
  std::vector<int32_t> prompt(10);
  for (int i = 0; i < 10; ++i) prompt[i] = 100 + i;
  Request first = Req(1, 10, 2);
  first.token_ids = prompt;
  ASSERT_FALSE(h.sched.Add(std::move(first)).has_value());
  EXPECT_EQ(h.Step(), (Plan{{1, 10}}));
  EXPECT_EQ(h.Step(), (Plan{{1, 1}}));
  ASSERT_EQ(h.finished, (std::vector<RequestId>{1}));
  Request second = Req(2, 10, 1);
  second.token_ids = prompt;
  ASSERT_FALSE(h.sched.Add(std::move(second)).has_value());
  EXPECT_EQ(h.Step(), (Plan{{2, 2}}));
  ASSERT_EQ(h.last_plan.size(), 1u);
  EXPECT_EQ(h.last_plan[0].num_computed, 8);
  EXPECT_TRUE(h.last_plan[0].restarted);
  EXPECT_EQ(h.last_plan[0].token_ids, (std::vector<int32_t>{108, 109}));
  EXPECT_EQ(h.sched.prefix_hit_tokens(), 8);
  EXPECT_EQ(h.sched.prefix_queried_tokens(), 20);
  EXPECT_EQ(h.finished, (std::vector<RequestId>{1, 2}));
  EXPECT_EQ(h.kv.free_blocks(), 1000);
}

}  // namespace
}  // namespace goodput
