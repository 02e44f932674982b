// End-to-end tests of `goodput workload from` as a user runs it.

#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <filesystem>
#include <string>

#include "support/run_command.h"
#include "support/temp_file.h"

namespace goodput {
namespace {

using testing::RunGoodput;
using testing::TempPath;
using testing::WriteTempFile;

// An Azure-format trace of 40 requests, 0.5 s apart: 100 or 300 tokens in, 20 out.
std::string AzureTrace() {
  std::string csv = "TIMESTAMP,ContextTokens,GeneratedTokens\n";
  for (int i = 0; i < 40; ++i) {
    csv += "2023-11-16 18:15:" + std::to_string(10 + i / 2) + (i % 2 ? ".5" : ".0") + "," + (i % 2 ? "300" : "100") +
           ",20\n";
  }
  return WriteTempFile("azure-trace.csv", csv);
}

// The trace becomes a workload file that the simulator replays as it was.
TEST(CliWorkload, FromATraceWritesAWorkloadTheSimulatorReplays) {
  const std::string out = TempPath("from-azure.yaml");
  std::filesystem::remove(out);
  auto r = RunGoodput("workload from " + AzureTrace() + " -o " + out + " --slo 'ttft p99 <= 2s'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("40 requests over 20 s: 2.05 requests/s on average"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("workload: " + out), std::string::npos);
  ASSERT_TRUE(std::filesystem::exists(out));
  auto sim = RunGoodput("sim --model llama-3.1-8b --gpu h100 --workload " + out + " --repeat 1 --no-ledger --json");
  ASSERT_EQ(sim.exit_code, 0) << sim.err;
  const auto point = boost::json::parse(sim.out).at("results").at(0).at("points").at(0).as_object();
  EXPECT_EQ(point.at("arrival").as_string(), "trace");
  EXPECT_EQ(point.at("requests_per_s").to_number<double>() > 1.5, true) << sim.out;
  EXPECT_FALSE(point.at("saturation").at("saturated").as_bool());
  auto json = RunGoodput("workload from " + AzureTrace() + " -o " + out + " --json");
  ASSERT_EQ(json.exit_code, 0) << json.err;
  const auto doc = boost::json::parse(json.out).as_object();
  EXPECT_EQ(doc.at("requests").as_int64(), 40);
  EXPECT_DOUBLE_EQ(doc.at("input").at("mean").to_number<double>(), 200);
}

// BurstGPT records failed requests with 0 response tokens: the replay leaves
// them out and says how many (a workload naming the trace without
// skip_empty refuses it, naming the request).
TEST(CliWorkload, ABurstGptTraceWithFailedRequestsReplaysTheRest) {
  const std::string trace = WriteTempFile("burstgpt.csv",
                                          "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n"
                                          "0,ChatGPT,472,18,490,Conversation log\n"
                                          "2,ChatGPT,1087,0,1087,Conversation log\n"
                                          "4,ChatGPT,300,40,340,Conversation log\n");
  const std::string out = TempPath("burst.yaml");
  auto r = RunGoodput("workload from " + trace + " -o " + out);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("2 requests over 4 s"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("1 requests of zero length (failed in the trace) are left out of the replay"), std::string::npos)
      << r.out;
  auto sim = RunGoodput("sim --model llama-3.1-8b --gpu h100 --workload " + out + " --repeat 1 --no-ledger");
  ASSERT_EQ(sim.exit_code, 0) << sim.err;
  const std::string strict = WriteTempFile("burst-strict.yaml", "arrival: {type: trace, file: \"" + trace +
                                                                    "\"}\nclasses:\n  - name: a\n    prompt: fixed:1\n"
                                                                    "    output: fixed:1\n");
  auto refused = RunGoodput("sim --model llama-3.1-8b --gpu h100 --workload " + strict + " --no-ledger");
  EXPECT_NE(refused.exit_code, 0);
  EXPECT_NE(refused.err.find("request 2 has a zero length"), std::string::npos) << refused.err;
}

// Bad input: one clear error, exit 2, and no file left behind.
TEST(CliWorkload, BadInputLeavesNoFile) {
  const std::string out = TempPath("never.yaml");
  std::filesystem::remove(out);
  testing::ExpectEachFails({
      {"workload from /nonexistent.csv -o " + out, "cannot read trace '/nonexistent.csv'"},
      {"workload from " + AzureTrace() + " -o " + out + " --slo 'ttft p99 <= fast'", "'fast' does not start"},
      {"workload from " + AzureTrace() + " -o /nonexistent-dir/w.yaml", "there is no folder /nonexistent-dir"},
      {"workload from " + WriteTempFile("empty.csv", "timestamp,input_length,output_length\n") + " -o " + out,
       "no requests in the trace"},
      {"workload from " + WriteTempFile("broken.csv", "timestamp,input_length,output_length\n1,x,2\n") + " -o " + out,
       "malformed row"},
  });
  EXPECT_FALSE(std::filesystem::exists(out));
}

}  // namespace
}  // namespace goodput
