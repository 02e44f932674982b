// End-to-end tests of `goodput bench`, `sweep` and `capacity` as a user runs
// them: against the simulator, goodput serve (embedded) and a dead URL.
#include <gtest/gtest.h>
#include <unistd.h>

#include <boost/json.hpp>
#include <regex>

#include "support/run_command.h"
#include "support/temp_file.h"

namespace goodput {
namespace {

using testing::RunGoodput;

const std::string kData = GOODPUT_SOURCE_DATA_DIR;

TEST(CliBench, SimTargetCapacitySearch) {
  auto r = RunGoodput("capacity --target sim:h100 --model llama-3.1-8b --workload " + kData +
                      "/workloads/chat.yaml --requests 300 --repeat 1 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  boost::system::error_code ec;
  auto doc = boost::json::parse(r.out, ec);
  ASSERT_FALSE(ec) << r.out.substr(0, 300);
  const auto& result = doc.at("results").at(0);
  EXPECT_NE(result.at("target").as_string().find("sim:h100"), std::string::npos);
  EXPECT_FALSE(result.at("capacity").is_null()) << r.out;
  // Every probe below the capacity holds, every one above fails.
  const std::string cap(result.at("capacity").as_string());
  bool above = false;
  for (const auto& p : result.at("points").as_array()) {
    EXPECT_EQ(p.at("holds").as_bool(), !above) << boost::json::serialize(p);
    if (p.at("load").as_string() == cap) above = true;
  }
}

// --vary on the simulator: one search per setting, configured by goodput sim's flags.
TEST(CliBench, SimTargetVariesAnEngineSetting) {
  auto r = RunGoodput("sweep --target sim:h100 --model llama-3.1-8b --workload " + kData +
                      "/workloads/chat.yaml --requests 300 --concurrency 8,64 --repeat 1 --no-ledger --json "
                      "--vary max-num-seqs=16,256");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto results = boost::json::parse(r.out).at("results").as_array();
  ASSERT_EQ(results.size(), 2u);
  EXPECT_NE(results[0].at("target").as_string().find("max_num_seqs 16"), std::string::npos);
  EXPECT_NE(results[1].at("target").as_string().find("max_num_seqs 256"), std::string::npos);
  // 64 clients on 16 seats queue for their first token; on 256 seats they do not.
  const double ttft16 = results[0].at("points").at(1).at("ttft_p99_s").to_number<double>();
  const double ttft256 = results[1].at("points").at(1).at("ttft_p99_s").to_number<double>();
  EXPECT_GT(ttft16, 2 * ttft256);
}

// Two --vary flags form a grid: every combination, the first flag outermost,
// each labelled with both flags and run on its own engine.
TEST(CliBench, SeveralVariedFlagsFormAGrid) {
  auto r = RunGoodput("sweep --target sim:h100 --model llama-3.1-8b --workload " + kData +
                      "/workloads/chat.yaml --requests 200 --concurrency 8 --repeat 1 --no-ledger --json "
                      "--vary max-num-seqs=4,64 --vary max-num-batched-tokens=512,8192");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto results = boost::json::parse(r.out).at("results").as_array();
  ASSERT_EQ(results.size(), 4u);
  const std::vector<std::string> labels = {
      "max-num-seqs=4, max-num-batched-tokens=512", "max-num-seqs=4, max-num-batched-tokens=8192",
      "max-num-seqs=64, max-num-batched-tokens=512", "max-num-seqs=64, max-num-batched-tokens=8192"};
  for (size_t i = 0; i < labels.size(); ++i) {
    EXPECT_EQ(results[i].at("setting").as_string(), labels[i]);
    const std::string seqs = i < 2 ? "max_num_seqs 4," : "max_num_seqs 64,";
    EXPECT_NE(results[i].at("target").as_string().find(seqs), std::string::npos) << results[i].at("target");
  }
}

// The embedded target: goodput serve on the tiny model, a two-point sweep
// with exact lengths and the server's own KV lines beside the table.
TEST(CliBench, EmbeddedSweepAgainstGoodputServe) {
  auto r = RunGoodput("sweep --target embedded --model goodput-tiny --workload " + kData +
                      "/workloads/chat-cpu.yaml --concurrency 1,4 --repeat 2 --requests 12 "
                      "--serve-args '--kv-cache-memory 64MiB' --slo 'interactive: ttft p50 <= 2s, tpot p50 <= 150ms'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("target: embedded `goodput serve --model goodput-tiny --kv-cache-memory 64MiB`"),
            std::string::npos) << r.out;
  EXPECT_NE(r.out.find("engine: GPU KV cache size: 131,072 tokens"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("max_num_seqs: planner"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("failed requests"), std::string::npos) << r.out;
}

// A Mooncake trace replayed against goodput serve over HTTP: the prompts send
// the same tokens wherever the trace repeats a block's hash, and the server's
// prefix cache (its vllm:prefix_cache_* counters) finds by hand's 1,536 of
// 3,524 tokens: request 2 reuses request 1's two blocks, request 3 the first.
TEST(CliBench, MooncakeTracesPrefixReuseReachesTheServersCache) {
  const std::string trace = testing::WriteTempFile(
      "mooncake-bench.jsonl",
      "{\"timestamp\": 0, \"input_length\": 1024, \"output_length\": 2, \"hash_ids\": [1, 2]}\n"
      "{\"timestamp\": 1000, \"input_length\": 1500, \"output_length\": 2, \"hash_ids\": [1, 2, 3]}\n"
      "{\"timestamp\": 2000, \"input_length\": 1000, \"output_length\": 2, \"hash_ids\": [1, 9]}\n");
  const std::string workload = testing::WriteTempFile(
      "mooncake-bench.yaml", "requests: 3\nwarmup: 0%\ncooldown: 0%\narrival:\n  type: trace\n  file: " + trace +
                                 "\nclasses:\n  - name: chat\n    prompt: fixed:1\n    output: fixed:1\n");
  auto r = RunGoodput("bench --target embedded --model goodput-tiny --workload " + workload +
                      " --repeat 1 --no-ledger --serve-args '--kv-cache-memory 64MiB' --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto cache = boost::json::parse(r.out).at("results").at(0).at("points").at(0).at("prefix_cache");
  EXPECT_EQ(cache.at("queried_tokens").to_number<double>(), 3524);
  EXPECT_EQ(cache.at("hit_tokens").to_number<double>(), 1536);
}

TEST(CliBench, VaryRestartsTheServerPerValue) {
  auto r = RunGoodput("bench --target embedded --model goodput-tiny --workload " + kData +
                      "/workloads/chat-cpu.yaml --concurrency 2 --requests 6 --serve-args '--kv-cache-memory 64MiB' "
                      "--vary max-num-seqs=1,4 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto results = boost::json::parse(r.out).at("results").as_array();
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(results[0].at("setting").as_string(), "max-num-seqs=1");
  EXPECT_NE(results[1].at("target").as_string().find("--max-num-seqs 4"), std::string::npos);
}

// A URL target whose server goodput starts per --vary value with --launch
// (here goodput serve itself, standing in for vLLM), and stops afterwards.
TEST(CliBench, LaunchTemplateRestartsAUrlTargetPerValue) {
  const int port = goodput::testing::UnusedLoopbackPort();
  ASSERT_GT(port, 0);
  const std::string launch = std::string(GOODPUT_BINARY) +
                             " serve --model goodput-tiny --kv-cache-memory 64MiB --port " + std::to_string(port) +
                             " --max-num-seqs {value}";
  auto r = RunGoodput("bench --target http://127.0.0.1:" + std::to_string(port) + " --model goodput-tiny --workload " +
                      kData + "/workloads/chat-cpu.yaml --concurrency 2 --requests 6 --no-ledger --csv --launch '" +
                      launch + "' --vary max-num-seqs=1,4");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // CSV: a header and one row per setting, each holding its SLO with no failures.
  std::vector<std::string> lines;
  for (size_t at = 0, nl; (nl = r.out.find('\n', at)) != std::string::npos; at = nl + 1)
    lines.push_back(r.out.substr(at, nl - at));
  ASSERT_EQ(lines.size(), 3u) << r.out;
  EXPECT_EQ(lines[0].rfind("setting,load,arrival,concurrency,", 0), 0u);
  EXPECT_EQ(lines[1].rfind("max-num-seqs=1,2,closed,2,", 0), 0u) << lines[1];
  EXPECT_EQ(lines[2].rfind("max-num-seqs=4,2,closed,2,", 0), 0u) << lines[2];
  // Nothing is left listening on the port.
  auto after = RunGoodput("bench --target http://127.0.0.1:" + std::to_string(port) + " --model m --workload " + kData +
                          "/workloads/chat-cpu.yaml --requests 4 --concurrency 1 --no-ledger");
  EXPECT_NE(after.out.find("connect"), std::string::npos) << after.out;
}

// Nothing listens: every request fails with its reason, the SLO fails
// (failures stay in the denominator), no latency is shown, and the command
// exits 3: nothing was measured.
TEST(CliBench, UnreachableUrlIsMeasuredAsFailures) {
  auto r = RunGoodput("bench --target http://127.0.0.1:9 --model m --workload " + kData +
                      "/workloads/chat-cpu.yaml --concurrency 2 --requests 5 --no-ledger");
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.out.find("fails"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("5 failed requests per run, e.g. connect 127.0.0.1:9"), std::string::npos) << r.out;
  EXPECT_FALSE(std::regex_search(r.out, std::regex("[0-9] (us|ms|s) "))) << r.out;  // no latency figure
  EXPECT_NE(r.err.find("every request failed"), std::string::npos) << r.err;
}

// Conversations: four turns of 128-token messages and 16-token answers, each
// turn's prompt the whole history. A turn finds the previous turn's prompt
// in the cache (the answer's place holds history ids, not what the server
// generated): 0 + 128 + 272 + 416 of 128 + 272 + 416 + 560 tokens, 59.3% by
// hand. goodput serve's /metrics and the simulator (the same KV manager on
// the same ids) both say so, within the 5 points of each other.
TEST(CliBench, ConversationsFindTheirHistoryOnTheServerAndInTheSimulator) {
  const std::string workload =
      testing::WriteTempFile("conversations.yaml",
                             "name: conv\nrequests: 40\nclasses:\n  - name: chat\n    session: {turns: fixed:4, "
                             "think: 0.1s}\n    prompt: fixed:128\n    output: fixed:16\n");
  const auto hit_rate = [](const std::string& out) {
    const auto c = boost::json::parse(out).at("results").at(0).at("points").at(0).at("prefix_cache");
    return c.at("hit_tokens").to_number<double>() / c.at("queried_tokens").to_number<double>();
  };
  auto serve = RunGoodput("bench --target embedded --model goodput-tiny --workload " + workload +
                          " --concurrency 2 --repeat 1 --no-ledger --serve-args '--kv-cache-memory 64MiB' --json");
  ASSERT_EQ(serve.exit_code, 0) << serve.err;
  auto sim =
      RunGoodput("sim --model llama-3.1-8b --gpu h100 --workload " + workload + " --concurrency 2 --repeat 1 --json");
  ASSERT_EQ(sim.exit_code, 0) << sim.err;
  EXPECT_NEAR(hit_rate(serve.out), 816.0 / 1376, 0.005);
  EXPECT_NEAR(hit_rate(sim.out), hit_rate(serve.out), 0.05);
}

TEST(CliBench, BadInputExitsNonZeroWithOneClearMessage) {
  const std::string w = " --workload " + kData + "/workloads/chat-cpu.yaml";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"bench --target ftp://127.0.0.1:1 --model m" + w, "only http:// and https://"},
      {"bench --target nonsense --model m" + w, "is not a URL"},
      {"bench --target sim:h100" + w, "needs --model"},
      {"bench --target sim:nope --model llama-3.1-8b" + w, "nope"},
      {"bench --target embedded --model goodput-tiny --serve-args '--kv-cache-dtype fp4'" + w, "fp4"},
      {"bench --target http://127.0.0.1:9 --model m --concurrency 1,2" + w, "use goodput sweep"},
      {"sweep --target http://127.0.0.1:9 --model m --vary max-num-seqs=1,2" + w, "restarted per setting"},
      {"sweep --target http://127.0.0.1:9 --model m --launch 'x {value}' --vary max-num-seqs=1,2 --vary "
       "block-size=16,32" +
           w,
       "use {flags}"},
      {"sweep --target http://127.0.0.1:9 --model m --launch 'x {value}'" + w, "no engine flag is varied"},
      {"sweep --target sim:h100 --model llama-3.1-8b --vary max-num-seqs=1,2 --vary max-num-seqs=4" + w,
       "max-num-seqs is varied twice"},
      {"bench --target http://127.0.0.1:9 --model m --launch false" + w, "'false' exited before"},
      {"bench --target embedded --launch 'x'" + w, "--launch is for URL targets"},
      {"bench --target sim:h100 --model llama-3.1-8b --engine-args '--bogus 1'" + w, "--bogus"},
      {"bench --target http://127.0.0.1:9 --model m --workload /nonexistent.yaml", "nonexistent"},
      {"bench --target http://127.0.0.1:9 --model m --concurrency 0" + w, "not a positive number"},
      {"bench --target http://127.0.0.1:9 --model m --concurrency 2.5" + w, "'2.5' is not a whole number"},
      {"bench --target http://127.0.0.1:9 --model m --json --csv" + w, "--json or --csv, not both"},
      {"bench --target http://127.0.0.1:9 --model m --concurrency 40" + w, "concurrency 40 needs at least 80 requests"},
      {"sweep --target http://127.0.0.1:9 --model m --repeat 3 --max-repeat 2" + w, "--max-repeat must be at least"},
      {"bench --target http://127.0.0.1:9,ftp://127.0.0.1:1 --model m" + w, "only http:// and https://"},
      {"bench --target http://127.0.0.1:9,http://127.0.0.1:10 --model m --launch 'x'" + w, "started by you"},
      {"bench --target http://127.0.0.1:9,http://127.0.0.1:10 --model m --router least-kv" + w,
       "a client does not see"},
      {"bench --target http://127.0.0.1:9,http://127.0.0.1:10 --model m --router nearest" + w, "--router 'nearest'"},
      {"ledger merge --into /tmp/goodput-merge-test.db /nonexistent/a.db /nonexistent/b.db", "no ledger at"},
      {"ledger merge --into /tmp/goodput-merge-test.db /nonexistent/a.db:999999999999999999999 x.db", "names no run"},
      {"ledger merge --into /tmp/goodput-merge-test.db", "shards is required"},
  };
  testing::ExpectEachFails(cases);
}

}  // namespace
}  // namespace goodput
