#include "engine/step_log.h"

#include <sstream>

#include <gtest/gtest.h>

#include "support/temp_file.h"

namespace goodput {
namespace {

using testing::WriteTempFile;

TEST(StepLog, RoundTrip) {
  StepPlan plan;
  plan.requests.resize(2);
  plan.requests[0].id = 4;
  plan.requests[0].num_computed = 512;
  plan.requests[0].num_new = 1;
  plan.requests[0].samples = true;
  plan.requests[0].arrival_time = 1.5;
  plan.requests[1].id = 9;
  plan.requests[1].num_computed = 0;
  plan.requests[1].num_new = 96;
  plan.requests[1].samples = false;
  plan.requests[1].arrival_time = 2.0000125;
  const std::vector<RequestEvent> events = {RequestEvent{4, 1, {}, true, FinishReason::kLength, {}}};
  std::ostringstream out;
  WriteStepLogHeader(out);
  WriteStepLogLine(out, ObservedStep{plan, 2.000250, 2.000250 + 0.0375, events});
  auto steps = ReadStepLog(WriteTempFile("ok.log", out.str()));
  ASSERT_TRUE(steps.ok()) << steps.status().message();
  ASSERT_EQ(steps->size(), 1u);
  const LoggedStep& s = (*steps)[0];
  EXPECT_TRUE(s.timed);
  EXPECT_NEAR(s.start, 2.000250, 1e-9);
  EXPECT_NEAR(s.seconds, 0.0375, 1e-9);
  ASSERT_EQ(s.requests.size(), 2u);
  EXPECT_EQ(s.requests[0].num_computed, 512);
  EXPECT_TRUE(s.requests[0].samples);
  EXPECT_TRUE(s.requests[0].finished);
  EXPECT_NEAR(s.requests[0].arrival, 1.5, 1e-9);
  EXPECT_EQ(s.requests[1].num_new, 96);
  EXPECT_FALSE(s.requests[1].samples);
  EXPECT_FALSE(s.requests[1].finished);
  EXPECT_NEAR(s.requests[1].arrival, 2.0000125, 1.01e-6) << "to the microsecond";
}

// Logs written before the engine's loop was timed still read: their steps'
// times and work, untimed.
TEST(StepLog, ReadsVersionOneLogs) {
  const std::string v1 = "# goodput step log v1: seconds, requests, then computed new samples per request\n";
  auto steps = ReadStepLog(WriteTempFile("v1.log", v1 + "0.0375 2  512 1 1  0 96 0\n"));
  ASSERT_TRUE(steps.ok()) << steps.status().message();
  ASSERT_EQ(steps->size(), 1u);
  EXPECT_FALSE((*steps)[0].timed);
  EXPECT_DOUBLE_EQ((*steps)[0].seconds, 0.0375);
  ASSERT_EQ((*steps)[0].requests.size(), 2u);
  EXPECT_EQ((*steps)[0].requests[1].num_new, 96);
  auto broken = ReadStepLog(WriteTempFile("v1-timed.log", v1 + "1.0 0.0375 1  512 1 1 0.5 0\n"));
  ASSERT_FALSE(broken.ok()) << "a version 2 line under a version 1 header";
  EXPECT_NE(broken.status().message().find(":2: not a step (seconds count"), std::string::npos);
}

// The observer OpenStepLog returns writes what ReadStepLog reads, and owns
// the file: it is complete once the observer is gone.
TEST(StepLog, OpenStepLogWritesEachObservedStep) {
  const std::string path = WriteTempFile("observed.log", "left over from before\n");
  StepPlan plan;
  plan.requests.resize(1);
  plan.requests[0].num_new = 7;
  {
    auto observe = OpenStepLog(path);
    ASSERT_TRUE(observe.ok()) << observe.status().message();
    const std::vector<RequestEvent> none;
    (*observe)(ObservedStep{plan, 1.0, 1.25, none});
    (*observe)(ObservedStep{plan, 1.25, 1.75, none});
  }
  auto steps = ReadStepLog(path);
  ASSERT_TRUE(steps.ok()) << steps.status().message();
  ASSERT_EQ(steps->size(), 2u) << "the old contents are replaced";
  EXPECT_DOUBLE_EQ((*steps)[1].seconds, 0.5);
  EXPECT_EQ((*steps)[1].requests.at(0).num_new, 7);
  auto bad = OpenStepLog("/nonexistent-dir/steps.log");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(), "cannot write the step log /nonexistent-dir/steps.log");
}

TEST(StepLog, BrokenLogsNameFileAndLine) {
  std::ostringstream header;
  WriteStepLogHeader(header);
  const std::string h = header.str();
  const auto err = [](const std::string& path) { return ReadStepLog(path).status().message(); };
  EXPECT_NE(err("/nonexistent.log").find("cannot read the step log /nonexistent.log"), std::string::npos);
  EXPECT_NE(err(WriteTempFile("plain.log", "hello\n")).find(":1: not a goodput step log"), std::string::npos);
  EXPECT_NE(err(WriteTempFile("empty.log", h)).find("no steps"), std::string::npos);
  EXPECT_NE(err(WriteTempFile("short.log", h + "1 0.01 2  5 1 1 0.5 0\n")).find(":2: not a step"), std::string::npos);
  EXPECT_NE(err(WriteTempFile("v1line.log", h + "0.01 1  5 1 1\n")).find(":2: not a step (start seconds"),
            std::string::npos);
  EXPECT_NE(err(WriteTempFile("extra.log", h + "1 0.01 1  5 1 1 0.5 0 9\n")).find(":2: not a step"), std::string::npos);
  EXPECT_NE(err(WriteTempFile("neg.log", h + "1 0.01 1  5 1 1 0.5 0\n2 -1 1  5 1 1 0.5 0\n")).find(":3: not a step"),
            std::string::npos);
  EXPECT_NE(err(WriteTempFile("negstart.log", h + "-1 0.01 1  5 1 1 0.5 0\n")).find(":2: not a step"),
            std::string::npos);
  EXPECT_NE(err(WriteTempFile("zero.log", h + "1 0.01 1  5 0 1 0.5 0\n")).find(":2: not a step"), std::string::npos);
  EXPECT_NE(err(WriteTempFile("fin.log", h + "1 0.01 1  5 1 1 0.5 2\n")).find(":2: not a step"), std::string::npos);
  EXPECT_NE(err(WriteTempFile("arr.log", h + "1 0.01 1  5 1 1 x 0\n")).find(":2: not a step"), std::string::npos);
}

}  // namespace
}  // namespace goodput
