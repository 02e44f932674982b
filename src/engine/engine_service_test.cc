#include "engine/engine_service.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <thread>

#include <gtest/gtest.h>

namespace goodput {
namespace {

// Samples one token per sampling request, slowly enough for aborts to land.
class SlowRunner : public ModelRunner {
 public:
  StepResult Execute(const StepPlan& plan) override {
    std::this_thread::sleep_for(std::chrono::microseconds(200));
    StepResult r;
    for (const auto& s : plan.requests) {
      if (s.samples) r.sampled.push_back({s.id, 1, {7}, {}});
    }
    return r;
  }
};

struct Collector {
  std::mutex mu;
  std::condition_variable cv;
  std::map<RequestId, int> tokens;
  std::map<RequestId, FinishReason> finished;

  OutputCallback For() {
    return [this](const RequestOutput& o) {
      std::lock_guard<std::mutex> lock(mu);
      tokens[o.id] += o.num_new_tokens;
      if (o.finished) {
        finished[o.id] = o.reason;
        cv.notify_all();
      }
    };
  }
  bool WaitFinished(size_t n) {
    std::unique_lock<std::mutex> lock(mu);
    return cv.wait_for(lock, std::chrono::seconds(20), [&] { return finished.size() >= n; });
  }
};

Request Req(RequestId id, int64_t prompt, int64_t out) {
  Request r;
  r.id = id;
  r.num_prompt_tokens = prompt;
  r.token_ids.assign(static_cast<size_t>(prompt), 5);
  r.sampling.max_tokens = out;
  r.sampling.ignore_eos = true;
  return r;
}

struct Fixture {
  KvCacheManager kv{{{KvGroupSpec::Type::kFull, 16, 0}}, 200};
  Scheduler sched{SchedulerConfig{8192, 256, 4096}, &kv, nullptr};
  SlowRunner runner;
  RealClock clock;
  EngineService service{&sched, &kv, &runner, &clock};
};

TEST(EngineService, ServesSubmissionsFromManyThreads) {
  Fixture f;
  f.service.Start();
  Collector c;
  std::vector<std::thread> clients;
  for (int t = 0; t < 4; ++t) {
    clients.emplace_back([&, t] {
      for (int i = 0; i < 10; ++i) EXPECT_TRUE(f.service.Submit(Req(t * 100 + i, 20, 5 + i), c.For()));
    });
  }
  for (auto& th : clients) th.join();
  ASSERT_TRUE(c.WaitFinished(40));
  for (const auto& [id, tokens] : c.tokens) EXPECT_EQ(tokens, 5 + id % 100) << id;
  f.service.Stop(true);
  const EngineStats s = f.service.Stats();
  EXPECT_EQ(s.requests_finished_total, 40);
  EXPECT_EQ(s.free_blocks, 200);
  EXPECT_EQ(s.running + s.waiting, 0);
}

TEST(EngineService, StampsArrivalAsTheRequestReachesTheEngine) {
  Fixture f;
  std::mutex mu;
  std::vector<double> arrivals;
  f.service.set_step_observer([&](const ObservedStep& step) {
    std::lock_guard<std::mutex> lock(mu);
    for (const auto& s : step.plan.requests) {
      if (s.restarted) arrivals.push_back(s.arrival_time);
    }
  });
  f.service.Start();
  Collector c;
  Request r = Req(1, 10, 2);
  r.arrival_time = -100;  // what a caller set is replaced
  const double before = f.clock.Now();
  ASSERT_TRUE(f.service.Submit(std::move(r), c.For()));
  const double after = f.clock.Now();
  ASSERT_TRUE(c.WaitFinished(1));
  f.service.Stop(true);
  std::lock_guard<std::mutex> lock(mu);
  ASSERT_EQ(arrivals.size(), 1u);
  EXPECT_GE(arrivals[0], before);
  EXPECT_LE(arrivals[0], after);
}

TEST(EngineService, AbortFreesTheBlocks) {
  Fixture f;
  f.service.Start();
  Collector c;
  ASSERT_TRUE(f.service.Submit(Req(1, 100, 3000), c.For()));  // 3,100 tokens: 194 of the 200 blocks
  for (int i = 0; i < 5000 && f.service.Stats().running == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  f.service.Abort(1);
  ASSERT_TRUE(c.WaitFinished(1));
  EXPECT_EQ(c.finished[1], FinishReason::kAborted);
  f.service.Stop(true);
  EXPECT_EQ(f.service.Stats().free_blocks, 200);
  EXPECT_EQ(f.service.Stats().requests_aborted_total, 1);
}

TEST(EngineService, StopAbortsWhatIsInFlightAndRefusesMore) {
  Fixture f;
  f.service.Start();
  Collector c;
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(f.service.Submit(Req(i, 50, 500), c.For()));  // >= 0.1 s of steps
  f.service.Stop(/*finish_inflight=*/false);
  ASSERT_TRUE(c.WaitFinished(5));
  for (const auto& [id, reason] : c.finished) EXPECT_EQ(reason, FinishReason::kAborted);
  EXPECT_FALSE(f.service.Submit(Req(9, 5, 5), c.For()));
  EXPECT_EQ(f.service.Stats().free_blocks, 200);
}

TEST(EngineService, RejectedRequestsAreAnswered) {
  Fixture f;
  f.service.Start();
  Collector c;
  ASSERT_TRUE(f.service.Submit(Req(1, 200000, 5), c.For()));  // longer than the max model length
  ASSERT_TRUE(c.WaitFinished(1));
  EXPECT_EQ(c.finished[1], FinishReason::kRejected);
  f.service.Stop(true);
  EXPECT_EQ(f.service.Stats().requests_rejected_total, 1);
}

}  // namespace
}  // namespace goodput
