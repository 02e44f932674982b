// End-to-end tests of `goodput sim`'s cost flags as a user gives them: each part of a step priced by
// --explain-step --json, checked by hand arithmetic.

#include <string>

#include <boost/json.hpp>
#include <gtest/gtest.h>

#include "support/run_command.h"

namespace goodput {
namespace {

using testing::RunGoodput;

const std::string kData = GOODPUT_SOURCE_DATA_DIR;

// The part `part` of `args`'s --explain-step --json answer ("seconds"), -1 (and a failure) when it fails.
double ExplainSeconds(const std::string& args, const char* part) {
  auto r = RunGoodput(args);
  EXPECT_EQ(r.exit_code, 0) << args << ": " << r.err;
  return r.exit_code == 0 ? boost::json::parse(r.out).at("seconds").at(part).to_number<double>() : -1.0;
}

// `args` exits non-zero, names `flag` on stderr and prints nothing on stdout.
void ExpectRefused(const std::string& args, const char* flag) {
  auto bad = RunGoodput(args);
  EXPECT_NE(bad.exit_code, 0) << args;
  EXPECT_NE(bad.err.find(flag), std::string::npos) << bad.err;
  EXPECT_EQ(bad.out, "") << args;
}

// SGLang launches a prompt step's kernels eagerly (data/hardware/engines.json): a short prompt's step waits on
// them, Llama-3.1-8B's 325 at the entry's 44.3 us, 14.4 ms, where vLLM replays graphs; decodes are not touched;
// --eager-prompt-kernel overrides it, and a negative one is one error.
TEST(CliSim, EagerPromptStepsWaitOnTheirLaunches) {
  const std::string base = "sim --model llama-3.1-8b --gpu h100 --json --explain-step ";
  const auto step = [&](const std::string& args, const char* part) { return ExplainSeconds(base + args, part); };
  EXPECT_NEAR(step("1@0+64 --engine sglang", "eager_launches"), 325 * 44.3e-6, 1e-6);
  EXPECT_NEAR(step("1@0+64 --engine sglang", "step"), 325 * 44.3e-6, 1e-6);
  EXPECT_EQ(step("1@0+64 --engine vllm", "eager_launches"), 0);
  EXPECT_EQ(step("8@1000 --engine sglang", "eager_launches"), 0);
  EXPECT_NEAR(step("1@0+64 --engine vllm --eager-prompt-kernel 1e-4", "eager_launches"), 325 * 1e-4, 1e-9);
  EXPECT_EQ(step("1@0+64 --engine sglang --eager-prompt-kernel 0", "eager_launches"), 0);
  auto text = RunGoodput("sim --model llama-3.1-8b --gpu h100 --engine sglang --explain-step 1@0+64");
  EXPECT_NE(text.out.find("eager launches"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("bound by: eager kernel launches (100% of the step)"), std::string::npos) << text.out;
  ExpectRefused(base + "1@0+64 --eager-prompt-kernel -1e-5", "--eager-prompt-kernel");
}

TEST(CliSim, AllReduceLatencyOverridesTheCards) {
  // DeepSeek-V3 on eight GPUs all-reduces twice in each of its 61 layers: 122
  // fixed times a step, whatever the bytes (by hand: 122 x (15 - 5) us).
  const std::string base = "sim --model deepseek-v3 --gpu h200 --tp 8 --json --explain-step 4@1000 --engine ";
  const auto communication = [&](const std::string& args) { return ExplainSeconds(base + args, "communication"); };
  const double card = communication("none"), fused = communication("none --allreduce-latency 5e-6");
  EXPECT_NEAR(card - fused, 122 * 10e-6, 1e-9);
  EXPECT_NEAR(communication("none --allreduce-latency 15e-6"), card, 1e-12);  // the H200 entry's 15 us
  auto text = RunGoodput("sim --model deepseek-v3 --gpu h200 --tp 8 --explain-step 4@1000 --allreduce-latency 5e-6");
  EXPECT_NE(text.out.find("5 us a collective beyond its bytes"), std::string::npos) << text.out;
  auto one_gpu = RunGoodput("sim --model llama-3.1-8b --gpu h100 --json --explain-step 4@1000 --allreduce-latency 1");
  ASSERT_EQ(one_gpu.exit_code, 0) << one_gpu.err;
  EXPECT_EQ(boost::json::parse(one_gpu.out).at("seconds").at("communication").to_number<double>(), 0);
  // SGLang fuses DeepSeek's all-reduces on an H200: 7.4 us each instead of the card's 15 (by hand: 122 x 7.6 us
  // less), and says so; the flag gives them back the card's.
  EXPECT_NEAR(card - communication("sglang"), 122 * 7.6e-6, 1e-9);
  EXPECT_NEAR(communication("sglang --allreduce-latency 15e-6"), card, 1e-12);
  auto said = RunGoodput("sim --model deepseek-v3 --gpu h200 --tp 8 --engine sglang -c 1 --requests 4 --workload " +
                         kData + "/workloads/random-1024-128.yaml");
  ASSERT_EQ(said.exit_code, 0) << said.err;
  EXPECT_NE(said.out.find("engine: sglang fuses each all-reduce with the norm after it (7.4 us"), std::string::npos)
      << said.out;
  auto unfused = RunGoodput("sim --model deepseek-v3 --gpu h200 --tp 8 --engine vllm -c 1 --requests 4 --workload " +
                            kData + "/workloads/random-1024-128.yaml");
  ASSERT_EQ(unfused.exit_code, 0) << unfused.err;
  EXPECT_EQ(unfused.out.find("fuses each all-reduce"), std::string::npos) << unfused.out;
  ExpectRefused(base + "none --allreduce-latency -1e-6", "--allreduce-latency");
}

// SGLang replays CUDA graphs for decode steps of up to --cuda-graph-max-bs requests (512 on eight H200, 32 on one
// A100 40GB: data/hardware/engines.json) and runs a larger one eagerly: DeepSeek-V3's 1,866 kernels at TP 8 then
// wait on the host's 44.3 us launches, 82.7 ms by hand; the flag moves the bound, 0 lifts it, and a negative one is
// one error. vLLM's decode steps replay graphs at any batch.
TEST(CliSim, DecodeStepsBeyondTheGraphsLaunchEagerly) {
  const std::string base = "sim --model deepseek-v3 --gpu h200 --tp 8 --json --explain-step ";
  const auto launches = [&](const std::string& args) { return ExplainSeconds(base + args, "eager_launches"); };
  EXPECT_EQ(launches("512@300 --engine sglang"), 0);
  EXPECT_NEAR(launches("513@300 --engine sglang"), 1866 * 44.3e-6, 1e-9);
  EXPECT_NEAR(ExplainSeconds(base + "513@300 --engine sglang", "step"), 1866 * 44.3e-6, 1e-9);  // it bounds
  EXPECT_EQ(launches("600@300 --engine sglang --cuda-graph-max-batch 1024"), 0);
  EXPECT_EQ(launches("600@300 --engine sglang --cuda-graph-max-batch 0"), 0);
  EXPECT_NEAR(launches("101@300 --engine sglang --cuda-graph-max-bs 100"), 1866 * 44.3e-6, 1e-9);  // SGLang's name
  EXPECT_EQ(launches("600@300 --engine vllm"), 0);
  // Under data parallelism the bound is each replica's: 1,000 decodes over two replicas of four GPUs are 500 each.
  const std::string dp = "sim --model deepseek-v3 --gpu h200 --tp 4 --dp 2 --engine sglang --json --explain-step ";
  EXPECT_EQ(ExplainSeconds(dp + "1000@300", "eager_launches"), 0);
  EXPECT_GT(ExplainSeconds(dp + "1100@300", "eager_launches"), 0);
  // One A100 40GB: 32.
  const std::string a100 = "sim --model llama-3.1-8b --gpu a100-40gb --engine sglang --json --explain-step ";
  EXPECT_EQ(ExplainSeconds(a100 + "32@100", "eager_launches"), 0);
  EXPECT_GT(ExplainSeconds(a100 + "33@100", "eager_launches"), 0);
  auto text = RunGoodput("sim --model deepseek-v3 --gpu h200 --tp 8 --engine sglang --explain-step 600@300");
  EXPECT_NE(text.out.find("a decode step of more than 512 requests runs without CUDA graphs"), std::string::npos)
      << text.out;
  auto said = RunGoodput("sim --model deepseek-v3 --gpu h200 --tp 8 --engine sglang -c 1 --requests 4 --workload " +
                         kData + "/workloads/random-1024-128.yaml");
  ASSERT_EQ(said.exit_code, 0) << said.err;
  EXPECT_NE(said.out.find("\nengine: sglang replays CUDA graphs for decode steps of up to 512 requests;"),
            std::string::npos)
      << said.out;
  EXPECT_EQ(said.out.find("engine: engine:"), std::string::npos) << said.out;
  ExpectRefused(base + "600@300 --engine sglang --cuda-graph-max-batch -1", "--cuda-graph-max-batch");
}

}  // namespace
}  // namespace goodput
