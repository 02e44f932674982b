// End-to-end tests of `goodput sim` as a user runs it.

#include <cctype>
#include <string>
#include <vector>

#include <boost/json.hpp>
#include <gtest/gtest.h>

#include "support/run_command.h"
#include "support/temp_file.h"

namespace goodput {
namespace {

using testing::RunGoodput;

const std::string kData = GOODPUT_SOURCE_DATA_DIR;
const std::string kBase = "sim --model llama-3.1-8b --gpu h100 --max-model-len 32k --workload " + kData +
                          "/workloads/chat.yaml --requests 300 --repeat 1 ";

using testing::WriteTempFile;

// The points of the first setting of a `goodput sim --json` output.
boost::json::array Points(const std::string& json_out) {
  return boost::json::parse(json_out).at("results").at(0).at("points").as_array();
}

TEST(CliSim, LadderTableWithCapacity) {
  auto r = RunGoodput(kBase + "--concurrency 1,8,32 --no-ledger");  // bench's flag is taken (exit 109 before)
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("concurrency  throughput  per-request"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("capacity: concurrency 32"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("holds"), std::string::npos);
}

// Without an SLO every class "holds" at any rate, so a rate the card cannot
// serve used to be the capacity ("still holding at the highest load tried").
// Now it is not sustainable, with its evidence, and the capacity stops below it.
TEST(CliSim, ALoadTheCardCannotSustainIsNeverTheCapacity) {
  const std::string args = "sim --model llama-3.1-8b --gpu a100-40gb --workload " + kData +
                           "/workloads/random-1024-128.yaml --rate 5,80 --repeat 1 --no-ledger";
  auto r = RunGoodput(args);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("capacity: load 5/s"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("at load 80/s: not sustainable: "), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("still holding"), std::string::npos) << r.out;
  auto j = RunGoodput(args + " --json");
  ASSERT_EQ(j.exit_code, 0) << j.err;
  const auto points = Points(j.out);
  EXPECT_EQ(points.at(0).at("verdict").as_string(), "holds");
  EXPECT_FALSE(points.at(0).at("saturation").at("saturated").as_bool());
  const auto& over = points.at(1).as_object();
  EXPECT_EQ(over.at("verdict").as_string(), "not sustainable");
  EXPECT_FALSE(over.at("holds").as_bool());
  EXPECT_LT(over.at("saturation").at("served_share").to_number<double>(), 0.5);
  EXPECT_GT(over.at("saturation").at("ttft_slope").to_number<double>(), 1);
}

// Weights in a format the card has no tensor cores for run weight-only at
// its 16-bit peak, and the simulator says so as vLLM's start-up log does; a
// card outside the catalog takes its FP8/FP4 figures by flag (a GH200-like
// card: with its FP8 figure the prefill-heavy first token comes sooner).
TEST(CliSim, WeightsInAFormatTheCardLacksRunWeightOnlyAndSaySo) {
  const std::string base = "sim --model llama-3.1-8b --workload " + kData +
                           "/workloads/chat.yaml --requests 100 --repeat 1 -c 8 --no-ledger ";
  const std::string warning =
      "has no FP4 FLOP/s figure (no FP4 tensor cores, or none given): nvfp4 weights run "
      "weight-only";
  auto hopper = RunGoodput(base + "--gpu h100 --weights nvfp4");
  ASSERT_EQ(hopper.exit_code, 0) << hopper.err;
  EXPECT_NE(hopper.out.find("engine: warning: NVIDIA H100 SXM 80GB " + warning), std::string::npos) << hopper.out;
  auto blackwell = RunGoodput(base + "--gpu b200 --weights nvfp4");
  ASSERT_EQ(blackwell.exit_code, 0) << blackwell.err;
  EXPECT_EQ(blackwell.out.find("warning:"), std::string::npos) << blackwell.out;
  const std::string card = base + "--weights fp8 --gpu-memory 96GiB --gpu-bandwidth 4TB/s --gpu-flops 989T --json ";
  auto bf16_only = RunGoodput(card);
  ASSERT_EQ(bf16_only.exit_code, 0) << bf16_only.err;
  EXPECT_NE(bf16_only.out.find("no FP8 FLOP/s figure"), std::string::npos) << bf16_only.out;
  auto with_fp8 = RunGoodput(card + "--gpu-flops-fp8 1979T");
  ASSERT_EQ(with_fp8.exit_code, 0) << with_fp8.err;
  EXPECT_EQ(with_fp8.out.find("no FP8 FLOP/s figure"), std::string::npos) << with_fp8.out;
  const auto ttft = [](const std::string& out) { return Points(out).at(0).at("ttft_p50_s").to_number<double>(); };
  EXPECT_LT(ttft(with_fp8.out), ttft(bf16_only.out));
  testing::ExpectEachFails({{base + "--gpu h100 --gpu-flops-fp8 1979T", "describe a card given by --gpu-memory"},
                            {card + "--gpu-flops-fp4 lots", "--gpu-flops-fp4"}});
}

// Data-parallel replicas as a user asks for them: the target names a
// replica's GPUs and the replicas, the engine lines one replica's KV cache and
// how the replicas share the MoE layers; a size below one is refused.
TEST(CliSim, DataParallelReplicasSayWhatTheyAre) {
  const std::string base = "sim --model qwen3-30b-a3b --gpu h100 --engine none --max-model-len 8192 --workload " +
                           kData + "/workloads/chat.yaml --requests 64 --repeat 1 --concurrency 16 ";
  auto r = RunGoodput(base + "--dp 2 --enable-expert-parallel");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("(qwen3-30b-a3b x1 per replica, 2 replicas,"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("engine: data parallel: 2 replicas of 1 GPU (2 GPUs)"), std::string::npos) << r.out;
  testing::ExpectEachFails({{base + "--dp 0", "--data-parallel-size must be at least 1"}});
}

// --unquantized reaches the simulated deployment as it does the plan: the
// checkpoint's bf16 attention shows in the target's weights, and a part the
// flag does not know, or a checkpoint with nothing quantized, is refused.
TEST(CliSim, UnquantizedPartsReachTheDeployment) {
  const std::string base = "sim --model deepseek-v3 --gpu b200 --tp 8 --engine none --max-model-len 8192 --workload " +
                           kData + "/workloads/chat.yaml --requests 16 --repeat 1 --concurrency 4 ";
  auto r = RunGoodput(base + "--weights nvfp4 --unquantized attention,draft --num-speculative-tokens 1");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("nvfp4 (attention,draft in bf16) weights"), std::string::npos) << r.out;
  testing::ExpectEachFails({{base + "--weights nvfp4 --unquantized attention,routers", "unknown part 'routers'"},
                            {base + "--weights bf16 --unquantized attention", "are not quantized"}});
}

TEST(CliSim, PerRequestCostOverrideSlowsBigBatchesAndRefusesNegatives) {
  const std::string base = "sim --model llama-3.1-8b --gpu h100 --engine none --max-model-len 32k --workload " +
                           kData + "/workloads/chat.yaml --requests 200 --repeat 1 --concurrency 64 --json";
  const auto tpot = [](const std::string& out) {
    return Points(out).at(0).at("tpot_p50_s").as_double();
  };
  auto plain = RunGoodput(base);
  auto costly = RunGoodput(base + " --per-request-cost 100e-6");
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  ASSERT_EQ(costly.exit_code, 0) << costly.err;
  // Up to 64 requests a step at 0.1 ms each: several ms more per step.
  EXPECT_GT(tpot(costly.out), tpot(plain.out) + 0.003);
  auto bad = RunGoodput(base + " --per-request-cost -1e-3");
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_NE(bad.err.find("--per-request-cost"), std::string::npos) << bad.err;
}

// TensorRT-LLM's entry overlaps host and GPU work: a host-bound step takes
// the host's time alone (0.5 ms + 64 requests x 1 ms), and
// --no-async-scheduling adds the GPU's work back.
TEST(CliSim, AsyncSchedulingHidesTheGpuBehindAHostBoundStep) {
  const std::string base = "sim --model llama-3.1-8b --gpu h100 --engine trtllm --max-model-len 32k --workload " +
                           kData + "/workloads/chat.yaml --requests 200 --repeat 1 --concurrency 64 --json " +
                           "--per-request-cost 1e-3";
  const auto tpot = [](const std::string& out) { return Points(out).at(0).at("tpot_p50_s").as_double(); };
  auto engines = RunGoodput(base), on = RunGoodput(base + " --async-scheduling"),
       off = RunGoodput(base + " --no-async-scheduling");
  for (const auto* r : {&engines, &on, &off}) ASSERT_EQ(r->exit_code, 0) << r->err;
  EXPECT_DOUBLE_EQ(tpot(engines.out), tpot(on.out));  // the engine's choice when neither flag is given
  EXPECT_NEAR(tpot(on.out), 0.0645, 0.002);
  EXPECT_GT(tpot(off.out), tpot(on.out) + 0.005);
}

// TensorRT-LLM's scheduler: a request enters only with blocks to its end
// (a 1 GiB pool holds seven of 1,024 + 128 tokens, so sixteen clients never
// preempt; vLLM's admission does), and a prompt enters whole (1,024 tokens
// over a 512-token budget are refused unless chunked).
TEST(CliSim, TensorRtLlmAdmitsWholeRequestsAndWholePrompts) {
  const std::string base =
      "sim --model llama-3.1-8b --gpu h100 --engine trtllm --kv-cache-memory 1GiB --max-model-len 4096 --workload " +
      kData + "/workloads/random-1024-128.yaml --requests 64 --repeat 1 --concurrency 16 --json";
  const auto point = [](const std::string& out) { return Points(out).at(0); };
  auto trt = RunGoodput(base), evicting = RunGoodput(base + " --no-guaranteed-no-evict"),
       small = RunGoodput(base + " --max-num-batched-tokens 512"),
       chunked = RunGoodput(base + " --max-num-batched-tokens 512 --enable-chunked-prefill");
  for (const auto* r : {&trt, &evicting, &small, &chunked}) ASSERT_EQ(r->exit_code, 0) << r->err;
  EXPECT_NE(trt.out.find("guaranteed no evict, whole prompts"), std::string::npos) << trt.out.substr(0, 400);
  EXPECT_EQ(point(trt.out).at("preemptions").to_number<double>(), 0);
  EXPECT_GT(point(evicting.out).at("preemptions").to_number<double>(), 0);
  EXPECT_EQ(point(small.out).at("rejected").to_number<double>(), 64);
  EXPECT_EQ(point(chunked.out).at("rejected").to_number<double>(), 0);
}

TEST(CliSim, JsonPointsAreMonotoneInThroughput) {
  auto r = RunGoodput(kBase + "--concurrency 1,4,16 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto doc = boost::json::parse(r.out);
  const auto& points = doc.at("results").at(0).at("points").as_array();
  ASSERT_EQ(points.size(), 3u);
  EXPECT_LT(points[0].at("throughput_tokens_per_s").as_double(), points[2].at("throughput_tokens_per_s").as_double());
}

TEST(CliSim, CapacitySearchFindsTheEdge) {
  auto r = RunGoodput(kBase + "--slo 'interactive: ttft p99 <= 1s, tpot p99 <= 20ms' capacity --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto doc = boost::json::parse(r.out);
  const auto& result = doc.at("results").at(0);
  ASSERT_TRUE(result.at("capacity").is_string()) << r.out;
  const int cap = std::stoi(std::string(result.at("capacity").as_string()));
  bool above_fails = false;
  for (const auto& p : result.at("points").as_array()) {
    const int c = static_cast<int>(p.at("concurrency").as_int64());
    if (c <= cap) {
      EXPECT_TRUE(p.at("holds").as_bool()) << c;
    }
    if (c == cap + 1) above_fails = !p.at("holds").as_bool();
  }
  EXPECT_TRUE(above_fails) << "bisection ends between adjacent loads";
}

TEST(CliSim, SweepRanksSettings) {
  auto r = RunGoodput(kBase + "--concurrency 8,64 --sweep max-num-seqs=4,64");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("=== max-num-seqs=4 ==="), std::string::npos);
  EXPECT_NE(r.out.find("Settings ranked by capacity, then goodput"), std::string::npos);
  const size_t ranking = r.out.find("Settings ranked");
  EXPECT_LT(r.out.find("max-num-seqs=64", ranking), r.out.find("max-num-seqs=4 ", ranking)) << r.out;
}

// One text of the definitions (core/definitions.h) in every measuring command's help.
TEST(CliSim, HelpPrintsTheSharedDefinitions) {
  for (const char* command : {"sim", "bench", "sweep", "capacity"}) {
    auto r = RunGoodput(std::string(command) + " --help");
    ASSERT_EQ(r.exit_code, 0) << command;
    EXPECT_NE(r.out.find("TPOT = (last token - first token) / (output tokens - 1)"), std::string::npos) << command;
    EXPECT_NE(r.out.find("ITL = the gap between token-carrying"), std::string::npos) << command;
  }
}

struct BadCase {
  const char* args;
  const char* message;
};
void PrintTo(const BadCase& c, std::ostream* os) { *os << c.args; }

class CliSimBadInput : public ::testing::TestWithParam<BadCase> {};

TEST_P(CliSimBadInput, FailsCleanly) {
  auto r = RunGoodput(kBase + GetParam().args);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_TRUE(r.out.empty()) << r.out;
  EXPECT_NE(r.err.find(GetParam().message), std::string::npos) << r.err;
}

INSTANTIATE_TEST_SUITE_P(
    Cases, CliSimBadInput,
    ::testing::Values(BadCase{"--slo 'chatty: ttft p99 <= 1s'", "the SLO names class 'chatty'"},
                      BadCase{"--slo 'ttft p99 <= fast'", "--slo"},
                      BadCase{"--concurrency 1,zero", "--concurrency: 'zero' is not a positive number"},
                      BadCase{"--concurrency 4 --rate 2", "not both"},
                      BadCase{"--scheduling-policy lifo", "unknown scheduling policy 'lifo'"},
                      BadCase{"--acceptance-rate 1.5", "--acceptance-rate"},
                      BadCase{"--num-speculative-tokens 8 --draft-acceptance 0.3 --acceptance-rate 0.5",
                              "give one of --acceptance-rate, --draft-acceptance"},
                      BadCase{"--draft-acceptance 0.3", "needs --num-speculative-tokens"},
                      BadCase{"--num-speculative-tokens 2 --mean-acceptance-length 3.4",
                              "--mean-acceptance-length: 2.4 accepted drafts per step is outside 0..2"},
                      BadCase{"--num-speculative-tokens 2 --draft-acceptance 1.2",
                              "--draft-acceptance must be in [0, 1]"},
                      BadCase{"--repeat 0", "--repeat"},
                      BadCase{"--sweep max-num-seqs", "must look like FLAG=V1,V2"},
                      BadCase{"--gpu-memory-utilization 0.2", "No available memory"},
                      BadCase{"--gpu-memory-utilization 0.29", "To serve at least one request"},
                      BadCase{"--mem-fraction-static 1.5", "--mem-fraction-static 1.5 must be in (0, 1]"}),
    [](const ::testing::TestParamInfo<BadCase>& info) {
      std::string name;
      for (const char* c = info.param.args; *c; ++c) name += std::isalnum(static_cast<unsigned char>(*c)) ? *c : '_';
      return name + "_" + std::to_string(info.index);
    });

// The source document's drafter: 30% of the proposed drafts accepted and 3.4
// tokens per step (eight drafts a step: 1 + 0.3 x 8). Given either figure in
// vLLM's terms, the simulator runs that drafter and reports both back.
TEST(CliSim, SpeculativeDecodingInVllmsTerms) {
  const std::string base = "sim --model qwen3.5-27b --gpu b200 --weights int4 --workload " + kData +
                           "/workloads/chat.yaml --requests 300 -c 32 --repeat 1 --num-speculative-tokens 8 --json ";
  for (const std::string flag : {"--draft-acceptance 0.3", "--mean-acceptance-length 3.4"}) {
    auto r = RunGoodput(base + flag);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto sd = Points(r.out).at(0).at("spec_decode");
    EXPECT_NEAR(sd.at("acceptance").to_number<double>(), 0.30, 0.015) << flag;
    EXPECT_NEAR(sd.at("mean_acceptance_length").to_number<double>(), 3.4, 0.12) << flag;
  }
  auto table = RunGoodput("sim --model qwen3.5-27b --gpu b200 --weights int4 --workload " + kData +
                          "/workloads/chat.yaml --requests 300 -c 32 --repeat 1 --num-speculative-tokens 8 "
                          "--draft-acceptance 0.3");
  EXPECT_NE(table.out.find("speculative decoding, in vLLM's terms"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("acceptance 3"), std::string::npos) << table.out;
}

TEST(CliSim, BrokenWorkloadFilesNameFileAndLine) {
  const std::string bad_dist = WriteTempFile("bad_dist.yaml",
                                        "classes:\n  - name: a\n    prompt: normal:1k,-3\n    output: fixed:10\n");
  auto r = RunGoodput("sim --model llama-3.1-8b --gpu h100 --workload " + bad_dist);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_TRUE(r.out.empty());
  EXPECT_NE(r.err.find(":3: class 'a': 'prompt'"), std::string::npos) << r.err;
  // A length past int32 once ended the process (std::bad_alloc, exit 134); now it is a typo named by its line.
  const std::string huge = WriteTempFile("huge.yaml",
                                         "classes:\n  - name: a\n    prompt: fixed:99999999999\n"
                                         "    output: fixed:10\n");
  r = RunGoodput("sim --model llama-3.1-8b --gpu h100 --workload " + huge);
  EXPECT_EQ(r.exit_code, 2);  // bad input, as any other
  EXPECT_NE(r.err.find(":3: class 'a': 'prompt'"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("over the limit of 16777216"), std::string::npos) << r.err;
  const std::string trace = WriteTempFile("trace.csv", "timestamp,input_length,output_length\n2,10,10\n1,10,10\n");
  const std::string traced =
      WriteTempFile("traced.yaml", "arrival:\n  type: trace\n  file: " + trace +
                                       "\nclasses:\n  - name: a\n    prompt: fixed:1\n    output: fixed:1\n");
  r = RunGoodput("sim --model llama-3.1-8b --gpu h100 --workload " + traced);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("timestamps go backwards at request 2"), std::string::npos) << r.err;
  const std::string no_cols = WriteTempFile("nocols.csv", "when,prompt\n1,2\n");
  const std::string traced2 =
      WriteTempFile("traced2.yaml", "arrival:\n  type: trace\n  file: " + no_cols +
                                        "\nclasses:\n  - name: a\n    prompt: fixed:1\n    output: fixed:1\n");
  r = RunGoodput("sim --model llama-3.1-8b --gpu h100 --workload " + traced2);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("nocols.csv:1: the header needs a timestamp"), std::string::npos) << r.err;
}

TEST(CliSim, TraceReplayRuns) {
  const std::string trace = WriteTempFile("ok_trace.csv", "timestamp,input_length,output_length\n0,100,20\n0.5,200,30\n"
                                                     "1.0,300,40\n1.5,50,10\n");
  const std::string wl =
      WriteTempFile("ok_traced.yaml", "requests: 100\narrival:\n  type: trace\n  file: " + trace +
                                          "\nclasses:\n  - name: a\n    prompt: fixed:1\n    output: fixed:1\n");
  auto r = RunGoodput("sim --model llama-3.1-8b --gpu h100 --repeat 1 --json --workload " + wl);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto doc = boost::json::parse(r.out);
  EXPECT_EQ(doc.at("results").at(0).at("points").at(0).at("load").as_string(), "trace");
}

// A day profile runs at its own rates, window by window: the table's load
// reads "profile"; --compare-offline prints the three arrangements and their
// JSON; what does not apply to a profile is one clear error.
TEST(CliSim, ADayProfileAndItsOfflineArrangements) {
  const std::string day = WriteTempFile("day.yaml", R"(name: day
profile_step: 2m
classes:
  - name: interactive
    profile: [1, 3, 1]
    prompt: fixed:200
    output: fixed:20
    slo: ttft p90 <= 2s over 2m
  - name: offline
    offline: true
    profile: [0.1, 0.1, 0.1]
    prompt: fixed:2000
    output: fixed:100
)");
  const std::string base = "sim --model llama-3.1-8b --gpu h100 --repeat 1 --workload " + day;
  auto one = RunGoodput(base);
  ASSERT_EQ(one.exit_code, 0) << one.err;
  EXPECT_NE(one.out.find("     profile "), std::string::npos) << one.out;
  EXPECT_NE(one.out.find("by window: hhh"), std::string::npos) << one.out;
  auto cmp = RunGoodput(base + " --compare-offline --offline-cap 2");
  ASSERT_EQ(cmp.exit_code, 0) << cmp.err;
  for (const char* s : {"as given", "quiet hours", "00:00-00:02, 00:04-00:06", "priority + cap", "--max-offline-seqs 2",
                        "windows held", "3 of 3"}) {
    EXPECT_NE(cmp.out.find(s), std::string::npos) << s << "\n" << cmp.out;
  }
  auto json = RunGoodput(base + " --compare-offline --json");
  ASSERT_EQ(json.exit_code, 0) << json.err;
  const auto arrangements = boost::json::parse(json.out).at("arrangements").as_array();
  ASSERT_EQ(arrangements.size(), 3u);
  EXPECT_EQ(arrangements.at(1).at("label").as_string(), "quiet hours");
  EXPECT_EQ(arrangements.at(2).at("point").at("load").as_string(), "profile");
  EXPECT_NE(arrangements.at(2).at("target").as_string().find("priority"), std::string::npos);
  for (const auto& [args, says] :
       std::vector<std::pair<std::string, std::string>>{{" --rate 2", "--rate and a capacity search do not apply"},
                                                        {" --compare-offline --vary max-num-seqs=8,16", "drop --vary"},
                                                        {" --compare-offline --offline-cap 0", "at least 1"}}) {
    auto bad = RunGoodput(base + args);
    EXPECT_NE(bad.exit_code, 0) << args;
    EXPECT_NE(bad.err.find(says), std::string::npos) << args << ": " << bad.err;
  }
  auto flat = RunGoodput(kBase + "--compare-offline");
  EXPECT_NE(flat.exit_code, 0);
  EXPECT_NE(flat.err.find("needs a day profile"), std::string::npos) << flat.err;
}

// --explain-step prices one batch part by part instead of simulating: the
// parts add up to the step, and a broken batch is one error, exit 2.
TEST(CliSim, ExplainsOneStep) {
  const std::string base = "sim --model llama-3.1-8b --gpu h100 --explain-step ";
  auto r = RunGoodput(base + "256@2048");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("one step: 256 decodes at 2,048 tokens of context; 256 requests, 256 tokens"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("bound by: "), std::string::npos) << r.out;
  auto j = RunGoodput(base + "1@0+8192,8@100 --json");
  ASSERT_EQ(j.exit_code, 0) << j.err;
  const auto out = boost::json::parse(j.out).as_object();
  const auto& s = out.at("seconds").as_object();
  const auto at = [&](const char* k) { return s.at(k).to_number<double>(); };
  EXPECT_NEAR(at("step"), at("host") + at("gpu"), 1e-12);  // vLLM's entry: host work in turn with the GPU's
  EXPECT_EQ(out.at("tokens").as_int64(), 8192 + 8);
  EXPECT_EQ(out.at("bound").as_string(), "matmul compute");
  for (const char* bad : {"8", "0@5", "1@5+0", "9999999@1"}) {
    auto e = RunGoodput(base + bad);
    EXPECT_EQ(e.exit_code, 2) << bad;
    EXPECT_NE(e.err.find("--explain-step"), std::string::npos) << e.err;
    EXPECT_EQ(e.out, "") << bad;
  }
}

// SGLang's --scheduler-recv-interval N: while others decode, an arrival waits
// for the scheduler's next intake, every N decode steps, so sixteen clients'
// first tokens come later by about (N + 1) / 2 decode steps on average (each
// arrival at an even phase of the count), by hand from the run's own TPOT;
// the target says so; 0 is one error.
TEST(CliSim, ArrivalsWaitForSglangsReceiveInterval) {
  const std::string workload = WriteTempFile("recv.yaml", R"(name: recv
seed: 1
requests: 160
arrival: {type: closed, concurrency: 16}
classes:
  - {name: interactive, prompt: "uniform:819-1024", output: "uniform:819-1024"}
)");
  const std::string base = "sim --model llama-3.1-8b --gpu h100 --engine sglang --repeat 1 --json --workload " +
                           workload + " --scheduler-recv-interval ";
  const auto point = [&](int n) {
    auto r = RunGoodput(base + std::to_string(n));
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return boost::json::parse(r.out).at("results").at(0);
  };
  const auto every = point(1), thirty = point(30);
  const auto ttft = [](const boost::json::value& v) {
    return v.at("points").at(0).at("latency").at("ttft").at("mean_s").to_number<double>();
  };
  const double tpot = thirty.at("points").at(0).at("tpot_p50_s").to_number<double>();
  EXPECT_NEAR((ttft(thirty) - ttft(every)) / (15.5 * tpot), 1, 0.2);
  EXPECT_NE(thirty.at("target").as_string().find("arrivals taken in every 30 decode steps"), std::string::npos);
  auto bad = RunGoodput(base + "0");
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_NE(bad.err.find("--scheduler-recv-interval must be at least 1"), std::string::npos) << bad.err;
  EXPECT_EQ(bad.out, "");
}

}  // namespace
}  // namespace goodput
