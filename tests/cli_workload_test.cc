// End-to-end tests of `goodput workload from` as a user runs it.

#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "core/json_file.h"
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

// With --profile-step the trace becomes a rate profile: 0.5 s apart over
// 19.5 s is four whole 4-second steps of 8 requests (2/s each); the
// simulator runs it step by step. Without arrival times, or with a step that
// is not a duration, it is one clear error and no file.
TEST(CliWorkload, FromATraceWritesARateProfile) {
  const std::string out = TempPath("profile-azure.yaml");
  std::filesystem::remove(out);
  auto r =
      RunGoodput("workload from " + AzureTrace() + " --profile-step 4s -o " + out + " --slo 'ttft p99 <= 2s over 4s'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("a rate profile of"), std::string::npos) << r.out;
  const std::string text = *ReadTextFile(out, "workload");
  EXPECT_NE(text.find("profile_step: 4s"), std::string::npos) << text;
  EXPECT_NE(text.find("profile: [2, 2, 2, 2]"), std::string::npos) << text;
  auto sim = RunGoodput("sim --model llama-3.1-8b --gpu h100 --workload " + out + " --repeat 1 --json");
  ASSERT_EQ(sim.exit_code, 0) << sim.err;
  const auto point = boost::json::parse(sim.out).at("results").at(0).at("points").at(0).as_object();
  EXPECT_EQ(point.at("load").as_string(), "profile");
  const std::string lengths = WriteTempFile("lengths.csv", "input_length,output_length\n100,10\n200,20\n");
  for (const auto& [args, says] :
       std::vector<std::pair<std::string, std::string>>{{lengths + " --profile-step 1h", "needs arrival times"},
                                                        {AzureTrace() + " --profile-step soon", "positive duration"},
                                                        {AzureTrace() + " --profile-step 1h", "less than one step"}}) {
    const std::string none = TempPath("none.yaml");
    std::filesystem::remove(none);
    auto bad = RunGoodput("workload from " + args + " -o " + none);
    EXPECT_NE(bad.exit_code, 0) << args;
    EXPECT_NE(bad.err.find(says), std::string::npos) << args << ": " << bad.err;
    EXPECT_FALSE(std::filesystem::exists(none)) << args;
  }
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

// A ShareGPT JSON file (no arrival times) becomes a workload of its length
// quantiles that runs at a load the command gives; vLLM's filter leaves out
// what its benchmark would (by hand: 8 characters is 2 tokens, under 4).
TEST(CliWorkload, FromShareGptJsonWritesItsLengths) {
  std::string json = "[";
  for (int i = 0; i < 30; ++i) {
    json += std::string(i ? "," : "") + R"({"id": ")" + std::to_string(i) +
            R"(", "conversations": [{"from": "human", "value": ")" + std::string(40 + 40 * (i % 3), 'q') +
            R"("}, {"from": "gpt", "value": ")" + std::string(400, 'a') + "\"}]}";
  }
  json += R"(, {"conversations": [{"from": "human", "value": "too short"}, {"from": "gpt", "value": "ok"}]}])";
  const std::string dataset = WriteTempFile("sharegpt.json", json);
  const std::string out = TempPath("from-sharegpt.yaml");
  auto r = RunGoodput("workload from " + dataset + " --vllm-bench-filter -o " + out + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto doc = boost::json::parse(r.out).as_object();
  EXPECT_EQ(doc.at("requests").as_int64(), 30);
  EXPECT_FALSE(doc.at("arrival_times").as_bool());
  EXPECT_DOUBLE_EQ(doc.at("input").at("mean").to_number<double>(), 20);  // 10, 20 and 30 tokens
  EXPECT_DOUBLE_EQ(doc.at("output").at("mean").to_number<double>(), 100);
  EXPECT_NE(doc.at("note").as_string().find("1 left out by vLLM's benchmark filter"), std::string::npos) << r.out;
  auto sim =
      RunGoodput("sim --model llama-3.1-8b --gpu h100 --workload " + out + " -c 4 --repeat 1 --no-ledger --json");
  ASSERT_EQ(sim.exit_code, 0) << sim.err;
  const auto point = boost::json::parse(sim.out).at("results").at(0).at("points").at(0).as_object();
  EXPECT_EQ(point.at("concurrency").to_number<double>(), 4) << sim.out;
}

// A CSV of lengths without a timestamp column (Vidur's processed traces name
// them num_prefill_tokens / num_decode_tokens) is a dataset, not a trace.
TEST(CliWorkload, FromACsvOfLengthsWithoutTimes) {
  const std::string lengths =
      WriteTempFile("lengths.csv", "num_prefill_tokens,num_decode_tokens,pd_ratio\n3772,54,69.9\n2015,156,12.9\n");
  const std::string out = TempPath("from-lengths.yaml");
  auto r = RunGoodput("workload from " + lengths + " -o " + out);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("2 requests, without arrival times"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("(the lengths of " + lengths + ")"), std::string::npos) << r.out;
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
      {"workload from " + AzureTrace() + " --chars-per-token 3 -o " + out, "are for a ShareGPT JSON file"},
      {"workload from " + WriteTempFile("cut.json", R"([{"conversations": [)") + " -o " + out, "not valid JSON"},
      {"workload from " + WriteTempFile("one.json", "[{}]") + " --chars-per-token 0 -o " + out, "must be 0.25 to 100"},
      {"workload from " + WriteTempFile("nocols.csv", "a,b\n1,2\n") + " -o " + out, "the header needs"},
  });
  EXPECT_FALSE(std::filesystem::exists(out));
}

}  // namespace
}  // namespace goodput
