#include "validation_set.h"

#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <cmath>
#include <filesystem>
#include <set>

#include "core/data_dir.h"
#include "support/temp_file.h"

namespace goodput::validation {
namespace {

using goodput::testing::WriteTempFile;

constexpr const char* kSource = R"(source:
  title: A sweep (somewhere)
  url: https://example.org/sweep
  engine: vLLM 0.11.0
  engine_kind: vllm
)";

Result<std::vector<Row>> Read(const std::string& body) {
  return ReadSourceFile(WriteTempFile("source.yaml", std::string(kSource) + body), DataDir() + "/workloads");
}

TEST(ValidationSet, TheShippedSetReadsAndNamesItsSources) {
  auto rows = ReadValidationSet(DataDir() + "/validation", DataDir() + "/workloads");
  ASSERT_TRUE(rows.ok()) << rows.status().message();
  std::set<std::string> sources;
  size_t figures = 0;
  for (const Row& r : *rows) {
    sources.insert(r.url);
    figures += r.figures.size();
    EXPECT_TRUE(r.url.rfind("https://", 0) == 0) << r.where;
    if (!r.workload.empty()) {
      EXPECT_TRUE(std::filesystem::exists(r.workload)) << r.where << ": " << r.workload;
    }
  }
  EXPECT_GE(figures, 40u);
  EXPECT_GE(sources.size(), 10u);
}

TEST(ValidationSet, ARowTakesTheFileDefaultsAndItsOwnFields) {
  auto rows = Read(R"(defaults:
  model: llama-3.1-8b
  args: --max-num-seqs 64
rows:
  - {gpu: h100, tp: 2, weights: fp8, prompt: 128, output: "lognormal:200,1", requests: 300, rate: 2.5,
     published: {throughput: 1000, tpot_p50_ms: 7.5}, fitted: {tpot_p50_ms: a factor}}
  - {model: qwen3-8b, gpu: a100, workload: random-1024-128.yaml, concurrency: 4, published: {ttft_mean_ms: 60}}
)");
  ASSERT_TRUE(rows.ok()) << rows.status().message();
  ASSERT_EQ(rows->size(), 2u);
  const Row& a = (*rows)[0];
  EXPECT_EQ(a.model, "llama-3.1-8b");
  EXPECT_EQ(a.tp, 2);
  EXPECT_EQ(a.prompt, "fixed:128");
  EXPECT_EQ(a.output, "lognormal:200,1");
  EXPECT_EQ(a.requests, 300);
  EXPECT_DOUBLE_EQ(a.rate, 2.5);
  EXPECT_EQ(a.args, "--max-num-seqs 64");
  EXPECT_EQ(a.engine_kind, "vllm");
  ASSERT_EQ(a.figures.size(), 2u);
  EXPECT_EQ(a.figures[0].fitted, "");
  EXPECT_EQ(a.figures[1].fitted, "a factor");
  const Row& b = (*rows)[1];
  EXPECT_EQ(b.model, "qwen3-8b");
  EXPECT_EQ(b.workload, DataDir() + "/workloads/random-1024-128.yaml");
  EXPECT_EQ(b.concurrency, 4);
  EXPECT_EQ(b.figures[0].figure, Figure::kTtftMean);
}

TEST(ValidationSet, BrokenFilesNameTheFileLineAndWhatIsWrong) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"rows:\n  - {model: m, gpu: g, prompt: 1, output: 1, colour: red, published: {throughput: 1}}\n",
       "unknown key 'colour'"},
      {"rows:\n  - {model: m, gpu: g, prompt: 1, output: 1, published: {throughput: -3}}\n",
       "'throughput' must be a positive number"},
      {"rows:\n  - {model: m, gpu: g, prompt: 1, output: 1, published: {tpot_p90_ms: 3}}\n",
       "unknown figure 'tpot_p90_ms'"},
      {"rows:\n  - {model: m, gpu: g, prompt: 1, output: 1, workload: w.yaml, published: {throughput: 1}}\n",
       "not both"},
      {"rows:\n  - {model: m, gpu: g, prompt: 1, published: {throughput: 1}}\n", "both prompt and output"},
      {"rows:\n  - {model: m, gpu: g, prompt: 1, output: 1, rate: 1, concurrency: 2, published: {throughput: 1}}\n",
       "a concurrency or a rate"},
      {"rows:\n  - {model: m, gpu: g, prompt: 1, output: 1, concurrency: 0, published: {throughput: 1}}\n",
       "must be positive"},
      {"rows:\n  - {model: m, gpu: g, prompt: 1, output: 1, published: {throughput: 1}, fitted: {ttft_p50_ms: x}}\n",
       "does not publish"},
      {"rows:\n  - {gpu: g, prompt: 1, output: 1, published: {throughput: 1}}\n", "needs a model and a gpu"},
      {"rows:\n  - {model: m, gpu: g, prompt: 1, output: 1}\n", "needs 'published:'"},
      {"rows: []\n", "at least one row"},
      {"rows:\n  - {model: m, gpu: g, tp: two, prompt: 1, output: 1, published: {throughput: 1}}\n",
       "'tp' must be a whole number"},
      {"rows:\n  - {model: [a, b], gpu: g, prompt: 1, output: 1, published: {throughput: 1}}\n",
       "a field is not of its kind"},
      {"rows:\n  - {model: m, gpu: g, prompt: 1, output: 1, published: {throughput: 1}, fitted: [x]}\n",
       "'fitted' must map"},
      {"rows:\n  - {model: m, gpu: g, prompt: 1, output: 1, limits: vllm, published: {throughput: 1}}\n",
       "'limits' must be trtllm-bench"},
      {"rows:\n  - {model: llama-3.1-8b, gpu: h100, prompt: 'lognormal:100,1', output: 1, limits: trtllm-bench,"
       " published: {throughput: 1}}\n",
       "trtllm-bench limits need fixed lengths"},
      {"rows:\n  - {model: no-such-model, gpu: h100, prompt: 1, output: 1, limits: trtllm-bench,"
       " published: {throughput: 1}}\n",
       "trtllm-bench limits: "},
  };
  for (const auto& [body, message] : cases) {
    auto rows = Read(body);
    ASSERT_FALSE(rows.ok()) << body;
    EXPECT_NE(rows.status().message().find("source.yaml:"), std::string::npos) << rows.status().message();
    EXPECT_NE(rows.status().message().find(message), std::string::npos) << rows.status().message();
  }
  auto no_source = ReadSourceFile(WriteTempFile("bare.yaml", "rows: []\n"), DataDir() + "/workloads");
  ASSERT_FALSE(no_source.ok());
  EXPECT_NE(no_source.status().message().find("'source' must give"), std::string::npos);
  auto empty_dir = ReadValidationSet(::testing::TempDir() + "no_such_dir", DataDir() + "/workloads");
  EXPECT_FALSE(empty_dir.ok());
}

TEST(ValidationSet, ARowWithoutALoadSendsEveryRequestAtOnce) {
  auto rows = Read(R"(rows:
  - {model: m, gpu: g, prompt: 1000, output: 10, requests: 7, published: {throughput: 1}}
  - {model: m, gpu: g, workload: random-1024-128.yaml, published: {throughput: 1}}
  - {model: m, gpu: g, workload: random-1024-128.yaml, concurrency: 3, published: {throughput: 1}}
)");
  ASSERT_TRUE(rows.ok()) << rows.status().message();
  auto burst = WorkloadYaml((*rows)[0]);
  ASSERT_TRUE(burst.ok());
  EXPECT_NE(burst->find("type: batch"), std::string::npos) << *burst;
  EXPECT_NE(burst->find("prompt: fixed:1000"), std::string::npos) << *burst;
  EXPECT_NE(burst->find("requests: 7"), std::string::npos) << *burst;
  auto file_burst = WorkloadYaml((*rows)[1]);  // random-1024-128.yaml is closed loop; no load given
  ASSERT_TRUE(file_burst.ok());
  EXPECT_NE(file_burst->find("type: batch"), std::string::npos) << *file_burst;
  auto closed = WorkloadYaml((*rows)[2]);
  ASSERT_TRUE(closed.ok());
  EXPECT_EQ(closed->find("type: batch"), std::string::npos) << *closed;
  const std::string args = SimArgs((*rows)[2], "/tmp/w.yaml");
  EXPECT_NE(args.find("--model 'm' --gpu 'g' --tp 1 --workload '/tmp/w.yaml' --repeat 1 --json"), std::string::npos)
      << args;
  EXPECT_NE(args.find(" -c 3"), std::string::npos) << args;
  EXPECT_NE(args.find(" --engine vllm"), std::string::npos) << args;
  Row five = (*rows)[2];
  five.repeat = 5;  // a table's runs (perf/source_table): the figures are their medians
  EXPECT_NE(SimArgs(five, "/tmp/w.yaml").find("--workload '/tmp/w.yaml' --repeat 5 --json"), std::string::npos);
}

// trtllm-bench's heuristic (TensorRT-LLM tensorrt_llm/bench/build/tuning.py),
// each case worked through its formula by hand: requests = (memory x GPUs -
// weights) x 0.95 / (KV bytes per token x (ISL + OSL)), the batch cap that
// rounded up, the token budget cap x (1 + ISL / OSL) rounded up.
TEST(ValidationSet, TrtllmBenchLimitsFollowItsTuningHeuristic) {
  struct Case {
    double gib;
    int gpus;
    double weight_gib, kv_bytes;
    int64_t isl, osl, bs, tokens;
  };
  const std::vector<Case> cases = {
      {80, 1, 8, 131072, 1000, 1000, 384, 2048},   // 280.2 requests: to 128s; 560 tokens: at least 2,048
      {180, 1, 10, 16384, 128, 128, 4096, 8192},   // 41,344 requests: capped at 4,096; 8,192 tokens: to 1,024s
      {24, 1, 16, 131072, 1000, 100, 64, 2048},    // 56.6 requests: at least 64
      {80, 1, 8, 65536, 2048, 128, 640, 9216},     // 515.0 requests; 8,755 tokens: to 1,024s
      {80, 1, 8, 65536, 3000, 200, 384, 5632},     // 350.2 requests; 5,603 tokens: to 512s
      {80, 2, 70, 327680, 1000, 1000, 160, 2048},  // two GPUs: 140.1 requests: to 32s
      {180, 1, 0, 16384, 20000, 100, 640, 32768},  // 557.5 requests; tokens capped at 32,768
  };
  for (const Case& c : cases) {
    const BatchLimits l = TrtllmBenchLimits(c.gib, c.gpus, c.weight_gib, c.kv_bytes, c.isl, c.osl);
    EXPECT_EQ(l.max_batch_size, c.bs) << c.isl << "/" << c.osl;
    EXPECT_EQ(l.max_num_tokens, c.tokens) << c.isl << "/" << c.osl;
  }
}

// A row asking for trtllm-bench's limits gets them from the catalog's model
// and card, and TensorRT-LLM rows run its engine's host costs.
TEST(ValidationSet, TrtllmRowsTakeTrtllmBenchsLimitsAndItsEngine) {
  auto rows = ReadSourceFile(WriteTempFile("trt.yaml", R"(source:
  title: T
  url: https://example.org/t
  engine: TensorRT-LLM 1.0
  engine_kind: trtllm
rows:
  - {model: llama-3.1-8b, gpu: h100, weights: fp8, kv_cache_dtype: fp8, prompt: 1000, output: 1000,
     limits: trtllm-bench, args: --gpu-memory-utilization 0.95, published: {throughput: 15220}}
)"),
                             DataDir() + "/workloads");
  ASSERT_TRUE(rows.ok()) << rows.status().message();
  // 8.03e9 parameters at 1 byte (7.48 GiB) on 79.18 GiB; 2 x 32 layers x 8 KV heads x 128 x 1 byte a token:
  // 68.1 GiB / (2,000 x 64 KiB) = 558 requests -> 640; 1,116 tokens -> 2,048.
  const std::string args = SimArgs((*rows)[0], "/tmp/w.yaml");
  EXPECT_NE(args.find("--gpu-memory-utilization 0.95 --max-num-seqs 640 --max-num-batched-tokens 2048"),
            std::string::npos)
      << args;
  EXPECT_NE(args.find(" --engine trtllm"), std::string::npos) << args;
}

// The PyTorch backend's trtllm-bench takes prompts whole, so it raises the
// token budget to the longest prompt plus the batch; the C++ executor's rows
// (chunked context) keep the heuristic's. 20,000 + 2,000 tokens at 64 KiB:
// 68.1 GiB / (22,000 x 64 KiB) = 50.7 requests -> 64; 64 x 11 = 704 tokens -> 2,048.
TEST(ValidationSet, TrtllmBenchWithoutChunkingHoldsAWholePrompt) {
  const auto args_of = [](const std::string& kind) {
    auto rows = ReadSourceFile(WriteTempFile("trt_" + kind + ".yaml",
                                             "source:\n  title: T\n  url: https://example.org/t\n"
                                             "  engine: TensorRT-LLM\n  engine_kind: " +
                                                 kind + R"(
rows:
  - {model: llama-3.1-8b, gpu: h100, weights: fp8, kv_cache_dtype: fp8, prompt: 20000, output: 2000,
     limits: trtllm-bench, args: --gpu-memory-utilization 0.95, published: {throughput: 1351}}
)"),
                               DataDir() + "/workloads");
    EXPECT_TRUE(rows.ok()) << rows.status().message();
    return rows.ok() ? SimArgs((*rows)[0], "/tmp/w.yaml") : std::string();
  };
  const std::string pytorch = args_of("trtllm"), cpp = args_of("trtllm-cpp");
  EXPECT_NE(pytorch.find("--max-num-seqs 64 --max-num-batched-tokens 20064"), std::string::npos) << pytorch;
  EXPECT_NE(cpp.find("--max-num-seqs 64 --max-num-batched-tokens 2048"), std::string::npos) << cpp;
}

// vLLM's V0 engine has host costs of its own (data/hardware/engines.json's
// vllm-v0), SGLang its scheduling; an engine the catalog has no kind for is
// refused, naming the kinds.
TEST(ValidationSet, VllmV0RowsRunTheirOwnEngineEntry) {
  const auto source = [](const std::string& kind) {
    return "source:\n  title: V\n  url: https://example.org/v\n  engine: vLLM 0.6.0\n  engine_kind: " + kind +
           "\nrows:\n  - {model: llama-3.1-8b, gpu: a100, prompt: 10, output: 10, published: {throughput: 1}}\n";
  };
  auto rows = ReadSourceFile(WriteTempFile("v0.yaml", source("vllm-v0")), DataDir() + "/workloads");
  ASSERT_TRUE(rows.ok()) << rows.status().message();
  EXPECT_EQ((*rows)[0].engine_kind, "vllm-v0");
  EXPECT_NE(SimArgs((*rows)[0], "/tmp/w.yaml").find(" --engine vllm-v0"), std::string::npos);
  auto sglang = ReadSourceFile(WriteTempFile("sglang.yaml", source("sglang")), DataDir() + "/workloads");
  ASSERT_TRUE(sglang.ok()) << sglang.status().message();
  const std::string args = SimArgs((*sglang)[0], "/tmp/w.yaml");
  EXPECT_NE(args.find(" --engine sglang"), std::string::npos) << args;  // its scheduling, not the GPU work alone
  EXPECT_EQ(args.find(" --engine none"), std::string::npos) << args;
  auto bad = ReadSourceFile(WriteTempFile("v2.yaml", source("vllm-v2")), DataDir() + "/workloads");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("must be vllm, vllm-v0, sglang, trtllm or trtllm-cpp"), std::string::npos)
      << bad.status().message();
}

TEST(ValidationSet, SimulatedFiguresComeInThePublishedUnits) {
  const auto sim = boost::json::parse(R"({"results": [{"points": [{"throughput_tokens_per_s": 1234.5,
      "latency": {"ttft": {"p50_s": 0.25, "mean_s": 0.5}, "tpot": {"p50_s": 0.007, "mean_s": 0.008},
                  "itl": {"p50_s": 0.006}}}]}]})");
  EXPECT_DOUBLE_EQ(*SimulatedFigure(sim, Figure::kThroughput), 1234.5);
  EXPECT_DOUBLE_EQ(*SimulatedFigure(sim, Figure::kTtftP50), 250);
  EXPECT_DOUBLE_EQ(*SimulatedFigure(sim, Figure::kTtftMean), 500);
  EXPECT_DOUBLE_EQ(*SimulatedFigure(sim, Figure::kTpotP50), 7);
  EXPECT_DOUBLE_EQ(*SimulatedFigure(sim, Figure::kItlP50), 6);
  EXPECT_DOUBLE_EQ(*SimulatedFigure(sim, Figure::kPerRequestMean), 125);  // 1 / 8 ms
  EXPECT_FALSE(SimulatedFigure(boost::json::parse(R"({"results": []})"), Figure::kTtftP50).ok());
  EXPECT_FALSE(SimulatedFigure(boost::json::parse("[1]"), Figure::kTtftP50).ok());
}

TEST(ValidationSet, SummariesGiveMedianAbsoluteErrorsAndTheShareAbove) {
  Row h100, a100;
  h100.gpu = "h100", h100.engine_kind = "vllm", h100.source = "S (x)";
  a100.gpu = "a100", a100.engine_kind = "trtllm", a100.source = "T";
  // Errors +10%, -20%, +30% on TPOT (the last fitted), -50% on TTFT.
  const std::vector<Outcome> outcomes = {{&h100, {Figure::kTpotP50, 10, ""}, 11},
                                         {&h100, {Figure::kTpotMean, 10, ""}, 8},
                                         {&a100, {Figure::kTpotP50, 10, "a factor"}, 13},
                                         {&a100, {Figure::kTtftP50, 100, ""}, 50}};
  auto find = [](const std::vector<GroupSummary>& s, const std::string& g) {
    for (const auto& x : s)
      if (x.group == g) return x;
    return GroupSummary{};
  };
  const auto all = Summarise(outcomes, false);
  EXPECT_EQ(all[0].group, "tpot");  // kinds first
  EXPECT_EQ(find(all, "tpot").count, 3);
  EXPECT_NEAR(find(all, "tpot").median_abs_error, 0.2, 1e-12);
  EXPECT_NEAR(find(all, "tpot").share_above, 2.0 / 3, 1e-12);
  EXPECT_NEAR(find(all, "tpot / card h100").median_abs_error, 0.15, 1e-12);
  EXPECT_EQ(find(all, "tpot / engine trtllm").count, 1);
  EXPECT_EQ(find(all, "tpot / source S").count, 2);
  EXPECT_NEAR(find(all, "ttft").median_abs_error, 0.5, 1e-12);
  EXPECT_EQ(find(all, "ttft").share_above, 0);
  const auto held = Summarise(outcomes, true);
  EXPECT_EQ(find(held, "tpot").count, 2);
  EXPECT_NEAR(find(held, "tpot").median_abs_error, 0.15, 1e-12);
}

// Each group's median error taken out, by hand: source S has a deployment
// with +10% and +30% and one with -10%, source T one figure at -20% (and a
// fitted one, left out). By source S's median is +10%: what is left is 0,
// 1.3 / 1.1 - 1, 0.9 / 1.1 - 1 and T's 0, median half of 0.2 / 1.1. By
// deployment the first one's median is sqrt(1.1 x 1.3): left 1 - 1.1 / it,
// 1.3 / it - 1, 0, 0, median half of the smaller.
TEST(ValidationSet, ErrorWithinGroupsTakesEachGroupsMedianOut) {
  Row a, b, c;
  a.source = "S (x)", a.model = "m", a.gpu = "h100";
  b.source = "S (y)", b.model = "m", b.gpu = "a100";
  c.source = "T", c.model = "m", c.gpu = "h100";
  const std::vector<Outcome> outcomes = {
      {&a, {Figure::kThroughput, 100, ""}, 110},         {&a, {Figure::kThroughput, 100, ""}, 130},
      {&b, {Figure::kThroughput, 100, ""}, 90},          {&c, {Figure::kThroughput, 100, ""}, 80},
      {&c, {Figure::kThroughput, 100, "a factor"}, 300}, {&a, {Figure::kTpotP50, 10, ""}, 11}};
  const auto w = ErrorWithinGroups(outcomes, "throughput");
  ASSERT_EQ(w.size(), 2u);
  EXPECT_EQ(w[0].by, "source");
  EXPECT_EQ(w[0].groups, 2);
  EXPECT_EQ(w[0].count, 4);
  EXPECT_NEAR(w[0].median_abs_error, 0.2 / 1.1 / 2, 1e-12);
  EXPECT_EQ(w[1].by, "deployment");
  EXPECT_EQ(w[1].groups, 3);
  EXPECT_NEAR(w[1].median_abs_error, (1 - 1.1 / std::sqrt(1.1 * 1.3)) / 2, 1e-12);
  EXPECT_EQ(ErrorWithinGroups(outcomes, "tpot")[1].median_abs_error, 0);  // one figure: nothing left
  EXPECT_TRUE(ErrorWithinGroups(outcomes, "ttft").empty());
}

}  // namespace
}  // namespace goodput::validation
