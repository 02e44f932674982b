// End-to-end tests of `goodput tune` and `goodput compare-outputs` as a user
// runs them: on the simulator, on goodput serve started for the run, and
// with broken input.

#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <boost/json.hpp>
#include <gtest/gtest.h>

#include "support/run_command.h"
#include "support/temp_file.h"

namespace goodput {
namespace {

using testing::RunGoodput;
namespace json = boost::json;

const std::string kData = GOODPUT_SOURCE_DATA_DIR;

// The recommendation's value of `flag` in a tune --json output.
std::string Recommended(const json::value& doc, const std::string& flag) {
  const auto& args = doc.at("recommendation").at("engine_args").as_array();
  for (size_t i = 0; i + 1 < args.size(); ++i) {
    if (args[i].as_string() == "--" + flag) return std::string(args[i + 1].as_string());
  }
  return "";
}

// On the simulator, chat traffic with a TTFT target: a cap of 4 or 8 queues
// requests for their first token, so the capacity grows with the cap and
// the largest value wins, by capacity, with the flags to paste.
TEST(CliTune, OnTheSimulatorTheSettingThatHoldsMostLoadIsRecommended) {
  auto r = RunGoodput("tune --target sim:h100 --model llama-3.1-8b --workload " + kData +
                      "/workloads/chat.yaml --requests 300 --space 'max-num-seqs=4..64' --no-ledger --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json::value doc = json::parse(r.out);
  EXPECT_EQ(doc.at("grid_size").as_int64(), 5);
  EXPECT_EQ(doc.at("evaluations").as_array().size(), 5u);
  EXPECT_FALSE(doc.at("confirmed").as_bool());
  EXPECT_EQ(Recommended(doc, "max-num-seqs"), "64");
  const double best = doc.at("evaluations").at(4).at("simulated").at("capacity_load").to_number<double>();
  for (const auto& e : doc.at("evaluations").as_array()) {
    EXPECT_LE(e.at("simulated").at("capacity_load").to_number<double>(), best) << json::serialize(e);
  }
  const auto& vllm = doc.at("recommendation").at("vllm_serve_args").as_array();
  EXPECT_EQ(vllm, (json::array{"--max-num-seqs", "64"}));
  EXPECT_EQ(doc.at("recommendation").at("serve_command").as_string(), "vllm serve");
  // The engine's own cap (1,024 on an H100) holds twice the load of the
  // space's largest, 64: said, not left to a parenthesis.
  EXPECT_TRUE(doc.at("recommendation").at("baseline_holds_more").as_bool());
  const std::string reason(doc.at("recommendation").at("reasons").at(0).as_string());
  EXPECT_NE(reason.find("max-num-seqs=64 over 32"), std::string::npos) << reason;
  EXPECT_NE(reason.find("capacity"), std::string::npos) << reason;
  const std::string config = testing::TempPath("tuned.yaml");
  auto table = RunGoodput(
      "tune --target sim:h100 --model llama-3.1-8b --workload " + kData +
      "/workloads/chat.yaml --requests 300 --space 'max-num-seqs=4..64' --no-ledger --write-config " + config);
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_NE(table.out.find("Recommendation: max-num-seqs=64"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("vllm serve ... --max-num-seqs 64"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("note: the engine as configured holds more load than any setting searched"),
            std::string::npos)
      << table.out;
  std::ifstream yaml(config);
  const std::string text((std::istreambuf_iterator<char>(yaml)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("\nmax-num-seqs: 64\n"), std::string::npos) << text;  // vllm serve --config's keys
  EXPECT_EQ(text.rfind("# goodput tune's recommendation for workload chat", 0), 0u) << text;
}

// A sim target run as SGLang (--engine sglang) is answered in SGLang's flags:
// its names where the meaning is the same, a note where it is not, and its
// --config file; TensorRT-LLM's spelling is not known, so no file is written.
TEST(CliTune, TheAnswerIsSpelledForTheEngineThatServesIt) {
  const std::string config = testing::TempPath("sglang.yaml");
  const std::string base = "tune --target sim:h100 --model llama-3.1-8b --workload " + kData +
                           "/workloads/chat.yaml --requests 300 --space 'max-num-seqs=32|64, "
                           "gpu-memory-utilization=0.9' --no-ledger";
  auto r = RunGoodput(base + " --engine-args '--engine sglang' --write-config " + config);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("python -m sglang.launch_server ... --max-running-requests 64\n"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("vllm serve"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("note: gpu-memory-utilization=0.9: SGLang's --mem-fraction-static"), std::string::npos) << r.out;
  std::ifstream yaml(config);
  const std::string text((std::istreambuf_iterator<char>(yaml)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("\nmax-running-requests: 64\n"), std::string::npos) << text;
  EXPECT_EQ(text.find("gpu-memory-utilization:"), std::string::npos) << text;
  auto json_run = RunGoodput(base + " --engine-args '--engine sglang' --json");
  ASSERT_EQ(json_run.exit_code, 0) << json_run.err;
  const json::value rec = json::parse(json_run.out).at("recommendation");
  EXPECT_EQ(rec.at("serve_engine").as_string(), "sglang");
  EXPECT_EQ(rec.at("serve_args"), (json::array{"--max-running-requests", "64"}));
  EXPECT_FALSE(rec.as_object().contains("vllm_serve_args"));
  const std::string unwritten = testing::TempPath("trtllm.yaml");
  auto trt = RunGoodput(base + " --engine-args '--engine trtllm' --write-config " + unwritten);
  EXPECT_EQ(trt.exit_code, 2) << trt.out;
  EXPECT_NE(trt.err.find("--write-config: goodput does not know --engine trtllm's config file"), std::string::npos)
      << trt.err;
  EXPECT_FALSE(std::ifstream(unwritten).good()) << "nothing half-written";
}

// An offline endpoint (no class has an SLO) is tuned for served throughput.
TEST(CliTune, AnEndpointWithoutAnSloIsTunedForThroughput) {
  const std::string offline = testing::WriteTempFile(
      "offline.yaml",
      "name: offline-only\nrequests: 200\narrival: {type: closed, concurrency: 8}\nclasses:\n  - name: batch\n"
      "    offline: true\n    prompt: lognormal:1k,0.5\n    output: fixed:200\n");
  auto r = RunGoodput("tune --target sim:h100 --model llama-3.1-8b --workload " + offline +
                      " --space 'max-num-seqs=4..64' --no-ledger");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("Recommendation: max-num-seqs=64"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("no class has an SLO, so settings are ranked by it"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("over 32 (the best other value): throughput"), std::string::npos) << r.out;
}

// The source document's two endpoints on one card and model (Qwen3.5-27B,
// 4-bit, B200): short chat traffic wants many sequences at once, long-context
// traffic few (more long requests at once stall each other's decodes), and
// each recommendation says why. Over the GPU work alone (--engine none): with
// vLLM's host costs chat's 256 and 512 tie, and the reason given is the tie.
TEST(CliTune, ChatAndLongContextOnTheSameCardWantOppositeSettings) {
  const std::string base =
      "tune --target sim:b200 --model qwen3.5-27b --engine-args '--engine none --weights int4 --max-model-len 1M' "
      "--space 'max-num-seqs=2..512' --no-ledger --json --workload " +
      kData + "/workloads/";
  auto chat = RunGoodput(base + "chat.yaml --requests 600");
  auto longer = RunGoodput(base + "long-context.yaml");
  ASSERT_EQ(chat.exit_code, 0) << chat.err;
  ASSERT_EQ(longer.exit_code, 0) << longer.err;
  const json::value c = json::parse(chat.out), l = json::parse(longer.out);
  EXPECT_GE(std::stoi(Recommended(c, "max-num-seqs")), 256);
  EXPECT_LE(std::stoi(Recommended(l, "max-num-seqs")), 4);
  const std::string chat_why(c.at("recommendation").at("reasons").at(0).as_string());
  const std::string long_why(l.at("recommendation").at("reasons").at(0).as_string());
  EXPECT_NE(chat_why.find("ttft"), std::string::npos) << chat_why;  // a smaller cap queues first tokens
  EXPECT_NE(long_why.find("tpot"), std::string::npos) << long_why;  // more long requests stall decodes
}

// On goodput serve started for the run: the baseline is measured first and
// the simulator fitted to its logged steps, the simulator's top two are
// measured, the int8 KV settings' answers are compared with the baseline's
// and differ, so no int8 setting is recommended; the study is in the ledger.
TEST(CliTune, ConfirmsOnGoodputServeAndGuardsTheOutputs) {
  const std::string ledger = testing::TempPath("tune.db");
  auto r = RunGoodput(
      "tune --target embedded --model goodput-tiny --engine-args '--kv-cache-memory 64MiB' --workload " + kData +
      "/workloads/chat-cpu.yaml --requests 24 --space 'max-num-seqs=1|4, kv-cache-dtype=auto|int8' "
      "--top 2 --json --ledger " +
      ledger);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json::value doc = json::parse(r.out);
  EXPECT_TRUE(doc.at("confirmed").as_bool());
  const auto& measured = doc.at("measured").as_array();
  ASSERT_EQ(measured.size(), 3u);  // the baseline and the top 2
  EXPECT_TRUE(measured[0].at("baseline").as_bool());
  EXPECT_TRUE(measured[0].at("simulated").is_object());  // the fitted simulator's prediction of it
  for (const auto& m : measured) {
    ASSERT_TRUE(m.at("measured").is_object()) << json::serialize(m);
    const std::string setting(m.at("setting").as_string());
    const bool int8 = setting.find("int8") != std::string::npos;
    EXPECT_EQ(m.as_object().contains("outputs"), int8) << setting;
    if (int8) {
      EXPECT_TRUE(m.at("outputs").at("differ").as_bool()) << json::serialize(m.at("outputs"));
    }
  }
  EXPECT_EQ(doc.at("recommendation").at("setting").as_string().find("int8"), std::string::npos);
  auto study = RunGoodput("ledger study " + std::to_string(doc.at("ledger_study").as_int64()) + " --ledger " + ledger +
                          " --json");
  ASSERT_EQ(study.exit_code, 0) << study.err;
  const json::value s = json::parse(study.out);
  EXPECT_EQ(s.at("status").as_string(), "complete");
  ASSERT_EQ(s.at("runs").as_array().size(), 2u);
  EXPECT_EQ(s.at("runs").at(0).at("role").as_string(), "target");  // the baseline ran first
  EXPECT_EQ(s.at("runs").at(1).at("role").as_string(), "simulator");
}

// A URL target whose server tune starts per setting (--launch with {flags};
// goodput serve standing in for vLLM), searched on a simulator given as a
// calibration file (here the fit an embedded tune wrote), then refitted to
// every load the target measured (--recalibrate) and the search's best
// re-ranked.
TEST(CliTune, AUrlTargetLaunchedPerSettingAndRecalibrated) {
  const std::string dir = testing::TempPath("tune_url");
  const std::string base = "--model goodput-tiny --workload " + kData +
                           "/workloads/chat-cpu.yaml --requests 24 "
                           "--space 'max-num-seqs=1|4' --no-ledger --json ";
  auto fit = RunGoodput("tune --target embedded --engine-args '--kv-cache-memory 64MiB' --top 1 --work-dir " + dir +
                        "/first " + base);
  ASSERT_EQ(fit.exit_code, 0) << fit.err;
  const int port = goodput::testing::UnusedLoopbackPort();
  ASSERT_GT(port, 0);
  const std::string launch = std::string(GOODPUT_BINARY) +
                             " serve --model goodput-tiny --kv-cache-memory 64MiB --port " + std::to_string(port) +
                             " {flags}";
  auto r = RunGoodput("tune --target http://127.0.0.1:" + std::to_string(port) + " --launch '" + launch +
                      "' --sim sim:" + dir +
                      "/first/fit-1.json --sim-args '--kv-cache-memory 64MiB' --top 2 --recalibrate --work-dir " + dir +
                      "/url " + base);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json::value doc = json::parse(r.out);
  const auto& measured = doc.at("measured").as_array();
  ASSERT_EQ(measured.size(), 3u);  // the baseline and both settings: the refit's first was measured already
  for (const auto& m : measured) EXPECT_TRUE(m.at("measured").is_object()) << json::serialize(m);
  EXPECT_NE(measured[1].at("measured").at("target").as_string().find("--max-num-seqs"), std::string::npos);
  ASSERT_TRUE(doc.at("refit").is_object());
  EXPECT_EQ(doc.at("refit").at("ranking").as_array().size(), 2u);
  EXPECT_NE(doc.at("refit").at("ranking").at(0).at("simulated").at("target").as_string().find(dir + "/url/fit-1.json"),
            std::string::npos);
}

// The source's check after switching the KV cache format: the same questions
// to goodput-small with an fp32 and an int8 KV cache differ; twice the same
// setting agrees token for token (exit 0 and 1, as diff).
TEST(CliCompareOutputs, CatchesADifferentKvFormatAndPassesTheSame) {
  const std::string base = "compare-outputs --target embedded --model goodput-small --max-tokens 24 --workload " +
                           kData + "/workloads/chat-cpu.yaml --json ";
  auto differ = RunGoodput(base +
                           "--engine-args '--kv-cache-memory 128MiB --kv-cache-dtype fp32' "
                           "--engine-args '--kv-cache-memory 128MiB --kv-cache-dtype int8'");
  EXPECT_EQ(differ.exit_code, 1) << differ.err;
  const json::value d = json::parse(differ.out).at("comparison");
  EXPECT_TRUE(d.at("differ").as_bool());
  EXPECT_LT(d.at("token_agreement").to_number<double>(), 0.9);
  EXPECT_GT(d.at("mean_abs_logprob_delta").to_number<double>(), 0);
  auto same = RunGoodput(base + "--engine-args '--kv-cache-memory 128MiB' --engine-args '--kv-cache-memory 128MiB'");
  EXPECT_EQ(same.exit_code, 0) << same.err << same.out;
  const json::value s = json::parse(same.out).at("comparison");
  EXPECT_FALSE(s.at("differ").as_bool());
  EXPECT_EQ(s.at("identical").as_int64(), 8);
  EXPECT_DOUBLE_EQ(s.at("mean_abs_logprob_delta").to_number<double>(), 0);
}

TEST(CliTune, BadInputExitsNonZeroWithOneClearMessage) {
  const std::string w = " --workload " + kData + "/workloads/chat.yaml --no-ledger";
  const std::string sim = "tune --target sim:h100 --model llama-3.1-8b";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"tune --target sim:h100 --model llama-3.1-8b --no-ledger", "--workload is required"},
      {sim + " --space 'max-num-seqs'" + w, "must look like FLAG=LOW..HIGH"},
      {sim + " --space 'max-num-seqs=64..8'" + w, "at least as large"},
      {sim + " --space 'bogus-flag=1|2'" + w, "--space bogus-flag=1"},
      {sim + " --space 'kv-cache-dtype=auto|fp7'" + w, "--space kv-cache-dtype=fp7"},
      {sim + " --top 0" + w, "--top must be at least 1"},
      {sim + " --budget 0" + w, "--budget must be at least 1"},
      {sim + " --recalibrate" + w, "the target is the simulator"},
      {sim + " --sim sim:a100-40gb" + w, "the target is the simulator already"},
      {sim + " --concurrency 1,2" + w, "from one load"},
      {"tune --target http://127.0.0.1:9 --model m --launch 'x {flags}'" + w, "needs --sim"},
      {"tune --target http://127.0.0.1:9 --model m --sim sim:h100 --sim-model llama-3.1-8b" + w, "--launch"},
      {"tune --target http://127.0.0.1:9 --model m --sim h100 --launch 'x {flags}'" + w, "--sim must be sim:GPU"},
      {"compare-outputs --target embedded --model goodput-tiny", "compares two engines"},
      {"compare-outputs --target sim:h100 --target sim:h100 --model llama-3.1-8b", "the simulator has no outputs"},
      {"compare-outputs --target embedded --target embedded --max-tokens 0", "--max-tokens must be"},
  };
  testing::ExpectEachFails(cases);
}

}  // namespace
}  // namespace goodput
