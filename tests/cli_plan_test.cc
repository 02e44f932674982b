// End-to-end tests of `goodput plan` as a user runs it.
#include <cctype>
#include <fstream>
#include <sstream>

#include <unistd.h>

#include <boost/json.hpp>
#include <gtest/gtest.h>

#include "support/run_command.h"

namespace goodput {
namespace {

using testing::RunGoodput;

TEST(CliPlan, TableForPeople) {
  auto r = RunGoodput("plan --model llama-3.1-8b --gpu h100 --weights-memory 14.99GiB --activation-memory 4.76GiB "
                      "--non-torch-memory 0.13GiB");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("KV pool (requested - the above)         51.38"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Maximum concurrency for 131,072 tokens per request: 3.21x"), std::string::npos);
}

// SGLang's --mem-fraction-static holds the weights and the pool only: at 0.9 the
// vLLM log's pool above (51.38 GiB) plus its activation peak (4.76 GiB).
TEST(CliPlan, SglangStaticShareLeavesTheActivationPeakOutside) {
  const std::string measured =
      "plan --model llama-3.1-8b --gpu h100 --weights-memory 14.99GiB --activation-memory 4.76GiB "
      "--non-torch-memory 0.13GiB --mem-fraction-static 0.9";
  auto r = RunGoodput(measured);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("KV pool (less weights, non-torch)       56.14"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("requested (x 0.90, SGLang's)"), std::string::npos);
  auto j = RunGoodput(measured + " --json");
  ASSERT_EQ(j.exit_code, 0) << j.err;
  auto doc = boost::json::parse(j.out);
  EXPECT_DOUBLE_EQ(doc.at("options").at("mem_fraction_static").as_double(), 0.9);
}

// The estimate names the profiling run's peak that decides it, and so the knob
// that lowers it: the sampler's for vLLM's 1,024 sequences on an H100 with a
// 201K vocabulary, the forward's once --max-num-seqs is small.
TEST(CliPlan, ActivationPeakSaysWhichPeakDecides) {
  auto sampler = RunGoodput("plan --model gpt-oss-120b --gpu h100 --max-model-len 32k");
  ASSERT_EQ(sampler.exit_code, 0) << sampler.err;
  EXPECT_NE(sampler.out.find("7.41   estimate, the sampler for 1,024 sequences"), std::string::npos) << sampler.out;
  auto forward = RunGoodput("plan --model gpt-oss-120b --gpu h100 --max-model-len 32k --max-num-seqs 8");
  ASSERT_EQ(forward.exit_code, 0) << forward.err;
  EXPECT_NE(forward.out.find("estimate, the forward over 8,192 tokens"), std::string::npos) << forward.out;
  auto measured = RunGoodput("plan --model gpt-oss-120b --gpu h100 --max-model-len 32k --activation-memory 7GiB");
  ASSERT_EQ(measured.exit_code, 0) << measured.err;
  EXPECT_NE(measured.out.find("7.00   measured\n"), std::string::npos) << measured.out;
  // --json says the same for programs: "peak" is null when the peak was measured.
  auto json = RunGoodput("plan --model gpt-oss-120b --gpu h100 --max-model-len 32k --max-num-seqs 8 --json");
  ASSERT_EQ(json.exit_code, 0) << json.err;
  EXPECT_EQ(boost::json::parse(json.out).at("memory").at("activation").at("peak").as_string(), "forward");
  auto json_measured = RunGoodput(
      "plan --model gpt-oss-120b --gpu h100 --max-model-len 32k --activation-memory 7GiB "
      "--json");
  ASSERT_EQ(json_measured.exit_code, 0) << json_measured.err;
  EXPECT_TRUE(boost::json::parse(json_measured.out).at("memory").at("activation").at("peak").is_null());
}

TEST(CliPlan, JsonForPrograms) {
  auto r = RunGoodput("plan --model qwen3.5-9b --gpu h100 --kv-cache-dtype fp8 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  boost::json::value doc = boost::json::parse(r.out);
  EXPECT_EQ(doc.at("vllm").at("attention_block_size").as_int64(), 1056);
  EXPECT_EQ(doc.at("options").at("kv_cache_dtype").as_string(), "fp8_e4m3");
  EXPECT_EQ(doc.at("layer_kinds").as_array().size(), 2u);
  EXPECT_TRUE(doc.at("startup_error").is_null());
}

TEST(CliPlan, CompareShowsBothPlans) {
  auto r = RunGoodput("plan --model qwen3.5-27b --gpu b200 --weights int4 --max-model-len 1M "
                      "--length-dist 0-200k:0.7,200k-500k:0.3 --compare kv-cache-dtype=fp8");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("Comparison: kv-cache-dtype=fp8"), std::string::npos);
  EXPECT_NE(r.out.find("capacity ratio 2.00x"), std::string::npos) << r.out;
  auto j = RunGoodput("plan --model qwen3.5-27b --gpu b200 --compare kv-cache-dtype=fp8 --compare max-model-len=64k "
                      "--json");
  ASSERT_EQ(j.exit_code, 0) << j.err;
  auto docs = boost::json::parse(j.out).as_array();
  ASSERT_EQ(docs.size(), 3u);
  EXPECT_EQ(docs[2].at("options").at("max_model_len").as_int64(), 64000);
}

// The source document's mishap: vLLM's "fully utilize" suggestion pinned
// (150.51 GiB on this card), then the KV format changed. A 150.5 GiB pin
// leaves 1.16 GiB of the 180 GB card: 1.16 - 1.00 (CUDA graphs) - 1.50 (the
// default buffer) = -1.34 GiB in both columns, and the plan warns; a 2 GiB pin
// less clears it (-1.34 + 2.00 = 0.66 GiB).
TEST(CliPlan, PinnedPoolsMarginIsShownPerFormat) {
  const std::string base = "plan --model qwen3.5-27b --gpu b200 --weights int4 --max-model-len 1M ";
  auto r = RunGoodput(base + "--kv-cache-memory 150.5GiB --compare kv-cache-dtype=fp8");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("  margin GiB                             -1.34               -1.34"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("margin: only 1.16 GiB is left"), std::string::npos) << r.out;
  auto ok = RunGoodput(base + "--kv-cache-memory 148.5GiB --compare kv-cache-dtype=fp8");
  ASSERT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_NE(ok.out.find("  margin GiB                              0.66                0.66"), std::string::npos)
      << ok.out;
  EXPECT_EQ(ok.out.find("margin: only"), std::string::npos) << ok.out;
}

// The same pin with the query left unquantized (vLLM's
// disable_flashinfer_q_quantization): the fp8 column owes one prefill's bf16
// copy of its pages, which vLLM's suggestion never saw: 0.93 GiB at 240,000
// tokens (by hand in src/plan/prefill_kv_copy_test.cc), so the pin that
// clears the bf16 column by 0.66 GiB leaves the fp8 one 0.27 GiB short.
TEST(CliPlan, UnquantizedQueryShowsTheFp8ColumnsPrefillCopy) {
  auto r = RunGoodput(
      "plan --model qwen3.5-27b --gpu b200 --weights int4 --max-model-len 240000 --kv-cache-memory 148.5GiB "
      "--compare kv-cache-dtype=fp8 --disable-flashinfer-q-quantization");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("    one prefill's KV copy GiB               0.00                0.93"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("    margin GiB                              0.66               -0.27"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("0.93 GiB per prefilling request in a step"), std::string::npos) << r.out;
  auto j = RunGoodput(
      "plan --model qwen3.5-27b --gpu b200 --max-model-len 240000 --kv-cache-dtype fp8 "
      "--disable-flashinfer-q-quantization --json");
  ASSERT_EQ(j.exit_code, 0) << j.err;
  EXPECT_EQ(boost::json::parse(j.out).at("memory").at("prefill_kv_copy").as_int64(), int64_t{155} * 1568 * 4096);
}

// Data-parallel replicas with whole experts per GPU: the plan is one
// replica's GPU and says so; it holds the attention whole and an eighth of
// the experts, so more weights than at TP 8, and compares with it.
TEST(CliPlan, DataParallelReplicasPlanOneReplicasGpu) {
  auto r = RunGoodput(
      "plan --model deepseek-v3 --gpu h200 --dp 8 --enable-expert-parallel --max-model-len 16k "
      "--compare data-parallel-size=1 --compare tensor-parallel-size=8 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto docs = boost::json::parse(r.out).as_array();
  ASSERT_EQ(docs.size(), 3u);
  const auto weights = [&](size_t i) { return docs[i].at("memory").at("weights").at("bytes").to_number<double>(); };
  EXPECT_GT(weights(1), weights(0)) << "one replica of one GPU holds every expert";
  EXPECT_GT(weights(0), weights(2)) << "tensor parallel splits the attention too";
  auto text = RunGoodput("plan --model deepseek-v3 --gpu h200 --dp 8 --enable-expert-parallel --max-model-len 16k");
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("(1 GPU per replica, 8 replicas, 8 GPUs in all; whole experts over 8 GPUs)"),
            std::string::npos)
      << text.out;
}

TEST(CliPlan, LengthsFile) {
  const std::string path = ::testing::TempDir() + "cli_lengths_" + std::to_string(getpid()) + ".txt";
  std::ofstream(path) << "1000\n3000\n";
  auto r = RunGoodput("plan --model llama-3.1-8b --gpu h100 --lengths " + path + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto doc = boost::json::parse(r.out);
  EXPECT_DOUBLE_EQ(doc.at("lengths").at("mean_length").as_double(), 2000.0);
  EXPECT_DOUBLE_EQ(doc.at("lengths").at("mean_blocks").as_double(), (63 + 188) / 2.0);  // ceil(1000/16), ceil(3000/16)
}

// Bad input: one clear message naming the problem, non-zero exit, nothing on
// stdout that looks like a result.
struct BadCase {
  const char* args;
  const char* message;
};

void PrintTo(const BadCase& c, std::ostream* os) { *os << c.args; }

class CliPlanBadInput : public ::testing::TestWithParam<BadCase> {};

TEST_P(CliPlanBadInput, FailsCleanly) {
  auto r = RunGoodput(GetParam().args);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_TRUE(r.out.empty()) << r.out;
  EXPECT_NE(r.err.find(GetParam().message), std::string::npos) << r.err;
}

INSTANTIATE_TEST_SUITE_P(
    Cases, CliPlanBadInput,
    ::testing::Values(
        BadCase{"plan --model llama-9000 --gpu h100", "Known models: deepseek-v3"},
        BadCase{"plan --model llama-3.1-8b --gpu rtx9090", "Known GPUs: a100-80gb"},
        BadCase{"plan --model llama-3.1-8b", "give --gpu NAME or --gpu-memory SIZE"},
        BadCase{"plan --model llama-3.1-8b --gpu-memory -5GB", "--gpu-memory"},
        BadCase{"plan --model llama-3.1-8b --gpu-memory 80XB", "unknown unit"},
        BadCase{"plan --model llama-3.1-8b --gpu h100 --max-model-len 12q", "--max-model-len"},
        BadCase{"plan --model llama-3.1-8b --gpu h100 --gpu-memory-utilization 1.2", "(0, 1]"},
        BadCase{"plan --model llama-3.1-8b --gpu h100 --mem-fraction-static 0", "--mem-fraction-static 0 must be"},
        BadCase{"plan --model llama-3.1-8b --gpu h100 --mem-fraction-static 0.8 --gpu-memory-utilization 0.9",
                "--gpu-memory-utilization excludes --mem-fraction-static"},
        BadCase{"plan --model llama-3.1-8b --gpu h100 --mem-fraction-static 0.8 --kv-cache-memory 20GiB",
                "give --mem-fraction-static or --kv-cache-memory, not both"},
        BadCase{"plan --model llama-3.1-8b --gpu h100 --weights int3", "unknown weight precision 'int3'"},
        BadCase{"plan --model gpt-oss-20b --gpu h100 --mxfp4-moe-backend fast", "unknown MXFP4 MoE backend 'fast'"},
        BadCase{"plan --model llama-3.1-8b --gpu h100 --length-dist 0-200k:x", "weight: 'x' is not a number"},
        BadCase{"plan --model llama-3.1-8b --gpu h100 --lengths /nonexistent", "cannot read lengths file"},
        BadCase{"plan --model llama-3.1-8b --gpu h100 --compare kv-cache-dtype", "must look like FLAG=VALUE"},
        BadCase{"plan --model llama-3.1-8b --gpu h100 --compare warp-speed=9",
                "'warp-speed=9': The following argument was not expected"},
        BadCase{"plan --model llama-3.1-70b --gpu h100 --tp 3", "not divisible"},
        BadCase{"plan --model llama-3.1-70b --gpu h100 --dp 0", "--data-parallel-size must be at least 1"},
        BadCase{"plan --model qwen3-30b-a3b --gpu h100 --routing-imbalance 0.5",
                "--routing-imbalance must be at least 1"},
        BadCase{"plan --model deepseek-v3 --gpu b200 --weights nvfp4 --unquantized attention,routers",
                "--unquantized: unknown part 'routers'"},
        BadCase{"plan --model llama-3.1-8b --gpu h100 --unquantized attention", "are not quantized"},
        BadCase{"plan --model /nonexistent/config.json --gpu h100", "unknown model"},
        BadCase{"plan --model llama-3.1-8b --gpu h100 --no-such-flag", "no-such-flag"}),
    [](const ::testing::TestParamInfo<BadCase>& info) {
      std::string name;
      for (const char* c = info.param.args + 5; *c; ++c)
        name += std::isalnum(static_cast<unsigned char>(*c)) ? *c : '_';
      return name + "_" + std::to_string(info.index);
    });

TEST(CliPlan, JunkLengthsLineIsNamed) {
  const std::string path = ::testing::TempDir() + "cli_junk_lengths_" + std::to_string(getpid()) + ".txt";
  std::ofstream(path) << "1000\n\nten thousand\n";
  auto r = RunGoodput("plan --model llama-3.1-8b --gpu h100 --lengths " + path);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_TRUE(r.out.empty());
  EXPECT_NE(r.err.find(":3: 'ten thousand'"), std::string::npos) << r.err;
}

TEST(CliPlan, MalformedConfigFileNamesTheField) {
  const std::string path = ::testing::TempDir() + "cli_bad_config_" + std::to_string(getpid()) + ".json";
  std::ofstream(path) << R"({"model_type": "llama", "hidden_size": 4096})";
  auto r = RunGoodput("plan --model " + path + " --gpu h100");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("missing field \"num_hidden_layers\""), std::string::npos) << r.err;
  std::ofstream(path) << "{not json";
  r = RunGoodput("plan --model " + path + " --gpu h100");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("not valid JSON"), std::string::npos) << r.err;
}

// A configuration that does not start is a result, not bad input: the plan is
// printed with the reason, and the exit code (3) says it would not start.
TEST(CliPlan, ConfigurationThatWouldNotStart) {
  auto r = RunGoodput("plan --model llama-3.1-70b --gpu l40s");
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.out.find("vLLM would not start: No available memory"), std::string::npos) << r.out;
}

// The engine's flags are defined once (cli/engine_flags): plan, sim and serve
// print the same help line for each.
TEST(CliPlan, EngineFlagsAreOneDefinition) {
  const std::string line = "Sequence cap (default: vLLM's for the device: 1024 on GPUs with >= 70 GiB except A100";
  for (const char* command : {"plan", "sim", "serve"}) {
    auto r = RunGoodput(std::string(command) + " --help");
    ASSERT_EQ(r.exit_code, 0) << command;
    EXPECT_NE(r.out.find(line), std::string::npos) << command;
    EXPECT_NE(r.out.find("--kv-cache-memory"), std::string::npos) << command;
  }
}

TEST(CliPlan, HelpExplainsInputsAndDefinitions) {
  auto r = RunGoodput("plan --help");
  EXPECT_EQ(r.exit_code, 0);
  for (const char* s : {"--kv-cache-dtype", "--length-dist", "--compare", "--gpu-memory-utilization",
                        "KV pool      = requested - weights", "k = 1000, K = 1024"}) {
    EXPECT_NE(r.out.find(s), std::string::npos) << s;
  }
}

// The GPU list shows what the simulator runs each format at: the B200's FP4
// peak (9,000 dense TFLOP/s) at its measured NVFP4 matmul efficiency, no FP8
// figure on an A100 (FP8 runs weight-only there); --json gives the same with
// each entry's source.
TEST(CliPlan, ListsCatalogs) {
  auto models = RunGoodput("plan --list-models");
  EXPECT_NE(models.out.find("gpt-oss-120b"), std::string::npos);
  auto gpus = RunGoodput("plan --list-gpus");
  ASSERT_EQ(gpus.exit_code, 0) << gpus.err;
  EXPECT_NE(gpus.out.find("mi300x"), std::string::npos);
  const auto line_of = [&](const std::string& card) {
    std::string line;
    for (std::istringstream in(gpus.out); std::getline(in, line);)
      if (line.rfind(card + " ", 0) == 0) return line;
    return std::string();
  };
  const std::string b200 = line_of("b200"), a100 = line_of("a100-80gb");
  EXPECT_NE(b200.find("   9000  0.60, nvfp4 0.43"), std::string::npos) << b200;
  EXPECT_NE(a100.find("     312       -       -"), std::string::npos) << a100;
  const std::string h200 = line_of("h200");  // FP8 experts at vLLM's Triton MoE kernel rate on Hopper
  EXPECT_NE(h200.find("0.60, fp8 experts 0.1, fp8-block experts 0.1"), std::string::npos) << h200;
  EXPECT_NE(b200.find("nvfp4 0.43, nvfp4 experts 0.055"), std::string::npos) << b200;
  auto json = RunGoodput("plan --list-gpus --json");
  ASSERT_EQ(json.exit_code, 0) << json.err;
  bool saw_b200 = false;
  const boost::json::value cards = boost::json::parse(json.out);
  for (const auto& card : cards.as_array()) {
    const auto& g = card.as_object();
    EXPECT_FALSE(g.at("source").as_string().empty()) << g.at("name");
    if (g.at("name") == "a100-80gb") {
      EXPECT_TRUE(g.at("fp8_flops").is_null());
      EXPECT_TRUE(g.at("expert_efficiency_by_precision").as_object().empty());
    }
    if (g.at("name") != "b200") continue;
    saw_b200 = true;
    EXPECT_EQ(g.at("fp4_flops").to_number<double>(), 9e15);
    EXPECT_EQ(g.at("compute_efficiency_by_precision").at("nvfp4").to_number<double>(), 0.43);
  }
  EXPECT_TRUE(saw_b200);
}

// NVIDIA's NVFP4 DeepSeek-R1 keeps attention in bf16: --unquantized attention
// reads each GPU's share of it at two bytes a parameter, not NVFP4's 0.5625,
// and the header and --json say so.
TEST(CliPlan, UnquantizedAttentionReadsTwoBytesAParameter) {
  const std::string base = "plan --model deepseek-v3 --gpu b200 --tp 8 --weights nvfp4 --json";
  auto all = RunGoodput(base);
  auto kept = RunGoodput(base + " --unquantized attention");
  ASSERT_EQ(all.exit_code, 0) << all.err;
  ASSERT_EQ(kept.exit_code, 0) << kept.err;
  const auto weights = [](const std::string& out) {
    return boost::json::parse(out).at("memory").at("weights").at("bytes").to_number<double>();
  };
  // Per layer: q_b 1,536 x 128 x 192, kv_b 512 x 128 x 256 and o 128 x 128 x 7,168 split over
  // eight GPUs; q_a 7,168 x 1,536 and kv_a 7,168 x 576 whole on each. 61 layers.
  const double split = 1'536.0 * 128 * 192 + 512.0 * 128 * 256 + 128.0 * 128 * 7'168;
  const double whole = 7'168.0 * (1'536 + 576);
  // Less the bf16 copy of kv_b (512 x 128 x 256) vLLM keeps for decode only beside a quantized one.
  const double copy = 61.0 * 512 * 128 * 256 / 8 * 2;
  EXPECT_NEAR(weights(kept.out) - weights(all.out), 61 * (split / 8 + whole) * (2 - 0.5625) - copy, 64.0);
  EXPECT_EQ(boost::json::parse(kept.out).at("options").at("unquantized").as_string(), "attention");
  auto text = RunGoodput("plan --model deepseek-v3 --gpu b200 --tp 8 --weights nvfp4 --unquantized attention,draft");
  EXPECT_NE(text.out.find("weights nvfp4 (attention,draft in bf16)"), std::string::npos) << text.out;
}

}  // namespace
}  // namespace goodput
