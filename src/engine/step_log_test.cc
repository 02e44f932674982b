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
  plan.requests[0].num_computed = 512;
  plan.requests[0].num_new = 1;
  plan.requests[0].samples = true;
  plan.requests[1].num_computed = 0;
  plan.requests[1].num_new = 96;
  plan.requests[1].samples = false;
  std::ostringstream out;
  WriteStepLogHeader(out);
  WriteStepLogLine(out, plan, 0.0375);
  auto steps = ReadStepLog(WriteTempFile("ok.log", out.str()));
  ASSERT_TRUE(steps.ok()) << steps.status().message();
  ASSERT_EQ(steps->size(), 1u);
  EXPECT_DOUBLE_EQ((*steps)[0].seconds, 0.0375);
  ASSERT_EQ((*steps)[0].requests.size(), 2u);
  EXPECT_EQ((*steps)[0].requests[0].num_computed, 512);
  EXPECT_TRUE((*steps)[0].requests[0].samples);
  EXPECT_EQ((*steps)[0].requests[1].num_new, 96);
  EXPECT_FALSE((*steps)[0].requests[1].samples);
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
    (*observe)(plan, 0.25);
    (*observe)(plan, 0.5);
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
  EXPECT_NE(err(WriteTempFile("short.log", h + "0.01 2  5 1 1\n")).find(":2: not a step"), std::string::npos);
  EXPECT_NE(err(WriteTempFile("extra.log", h + "0.01 1  5 1 1 9\n")).find(":2: not a step"), std::string::npos);
  EXPECT_NE(err(WriteTempFile("neg.log", h + "0.01 1  5 1 1\n-1 1  5 1 1\n")).find(":3: not a step"), std::string::npos);
  EXPECT_NE(err(WriteTempFile("zero.log", h + "0.01 1  5 0 1\n")).find(":2: not a step"), std::string::npos);
}

}  // namespace
}  // namespace goodput
