// goodput sim's fleets as a user runs them: instances behind a router, the
// fewest that hold a load, and prefill and decode on instances apart.
#include <cmath>
#include <string>

#include <boost/json.hpp>
#include <gtest/gtest.h>

#include "support/run_command.h"
#include "support/temp_file.h"

namespace goodput {
namespace {

using testing::ExpectEachFails;
using testing::RunGoodput;
using testing::WriteTempFile;

const std::string kData = GOODPUT_SOURCE_DATA_DIR;
const std::string kBase = "sim --model llama-3.1-8b --gpu h100 --max-model-len 32k --workload " + kData +
                          "/workloads/chat.yaml --requests 300 --repeat 1 ";

// A fleet: --replicas instances behind --router, each one's share of the
// requests printed; `sim fleet` finds the fewest instances that hold a load
// and says it in GPUs; bad fleet flags are one clear error each.
TEST(CliSim, AFleetBehindARouterAndItsSize) {
  auto r = RunGoodput(kBase + "--rate 20 --replicas 3 --router least-outstanding");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("a fleet of 3 instances behind least-outstanding routing"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("replicas: each one's share of the requests"), std::string::npos) << r.out;
  auto fleet = RunGoodput("sim fleet --model llama-3.1-8b --gpu h100 --tp 2 --max-model-len 32k --workload " + kData +
                          "/workloads/chat.yaml --requests 600 --repeat 1 --rate 60 --json");
  ASSERT_EQ(fleet.exit_code, 0) << fleet.err;
  const auto doc = boost::json::parse(fleet.out).as_object();
  ASSERT_FALSE(doc.at("replicas").is_null()) << fleet.out;
  const int64_t n = doc.at("replicas").as_int64();
  EXPECT_GT(n, 1);
  EXPECT_EQ(doc.at("gpus").as_int64(), 2 * n);  // two GPUs a replica (--tp 2)
  for (const auto& p : doc.at("probes").as_array()) {
    const bool holds = p.at("point").at("holds").as_bool();
    EXPECT_EQ(holds, p.at("replicas").as_int64() >= n) << p;  // fewer fail, as many or more hold
  }
  ExpectEachFails({{"--rate 20 --replicas 0", "--replicas must be 1 to 1024"},
                   {"--rate 20 --replicas 2 --router random", "--router 'random': one of round-robin"},
                   {"--rate 20,40 fleet", "one load"},
                   {"--rate 20 fleet --max-replicas 5000", "--max-replicas must be 1 to 1024"}},
                  kBase);
}

// DistServe's Figure 6 shape (512-token prompts, 64-token answers) under TTFT
// p90 <= 0.4 s and the given TPOT p90 target, as a workload file.
std::string DistServeShape(const std::string& tpot) {
  return WriteTempFile("pd-" + tpot + ".yaml",
                       "requests: 1000\nwarmup: 10%\ncooldown: 10%\narrival: {type: poisson, rate: 1}\nclasses:\n"
                       "  - name: chat\n    prompt: fixed:512\n    output: fixed:64\n    slo: ttft p90 <= 0.4s, "
                       "tpot p90 <= " +
                           tpot + "\n");
}

// Prefill/decode disaggregation: 512-token prompts and 64-token answers
// (DistServe's Figure 6 shape) on three A100s, under a tight TPOT target
// (p90 <= 15 ms) that prefills sharing a step break: two prefill instances
// feeding one decode instance hold a higher rate than the same three GPUs
// aggregated. Under a loose target (40 ms) interference costs nothing and
// the split gains nothing. Bad flags: one clear error each.
TEST(CliSim, DisaggregatedPrefillAgainstTheSameGpusAggregated) {
  const auto gain = [](const std::string& tpot) {
    const std::string w = DistServeShape(tpot);
    auto r = RunGoodput("sim capacity --model llama-3.1-8b --gpu a100-80gb --workload " + w +
                        " --rate 4 --repeat 1 --prefill-replicas 2 --decode-replicas 1 --compare-aggregated");
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("2 prefill + 1 decode instances behind round-robin routing, KV over nvlink at 300 GB/s"),
              std::string::npos)
        << r.out;
    const size_t at = r.out.find("; gain ");
    EXPECT_NE(at, std::string::npos) << r.out;
    return at == std::string::npos ? 0.0 : std::stod(r.out.substr(at + 7));
  };
  EXPECT_GT(gain("15ms"), 1.3);
  EXPECT_NEAR(gain("40ms"), 1.0, 0.1);
  // The fleet search over splits: at 40 requests/s under the tight target a
  // split needs fewer GPUs than aggregated instances, and no probe of fewer
  // instances than its answer held (so the answer is the fewest tried).
  const std::string w = DistServeShape("15ms");
  auto fleet = RunGoodput("sim fleet --model llama-3.1-8b --gpu a100-80gb --workload " + w +
                          " --rate 40 --repeat 1 --disaggregated --json");
  ASSERT_EQ(fleet.exit_code, 0) << fleet.err;
  const auto doc = boost::json::parse(fleet.out).as_object();
  ASSERT_FALSE(doc.at("replicas").is_null() || doc.at("split").is_null()) << fleet.out;
  const int64_t aggregated = doc.at("gpus").as_int64(), split = doc.at("split").at("gpus").as_int64();
  EXPECT_LT(split, aggregated);
  for (const auto& p : doc.at("probes").as_array()) {
    if (p.at("prefill_replicas").as_int64() == 0) continue;
    if (p.at("gpus").as_int64() < split) {
      EXPECT_FALSE(p.at("point").at("holds").as_bool()) << p;
    }
  }
  ExpectEachFails({{"--rate 20 --decode-replicas 2", "give --prefill-replicas"},
                   {"--rate 20 --compare-aggregated", "give --prefill-replicas"},
                   {"--rate 20 --replicas 2 --prefill-replicas 1", "with --prefill-replicas give --decode-replicas"},
                   {"--rate 20 --prefill-replicas 2000", "--prefill-replicas must be 1 to 1024"},
                   {"--rate 20 --prefill-replicas 1 --decode-replicas -1", "--decode-replicas must be 1 to 1024"},
                   {"--rate 20 --prefill-replicas 1 --kv-link pigeon", "--kv-link 'pigeon': one of nvlink"},
                   {"--rate 20 --prefill-replicas 1 --kv-transfer-bandwidth fast", "--kv-transfer-bandwidth"},
                   {"--rate 20 --prefill-replicas 1 --kv-transfer-bandwidth 0GB/s", "'0GB/s' must be positive"},
                   {"--rate 20 --prefill-replicas 1 --kv-transfer-latency soon", "soon"}},
                  kBase);
}

// Prefill instances sized apart (--prefill-tp): a 70B model in FP8 on H100s,
// four one-GPU prefill instances feeding one four-GPU decode instance (NVIDIA
// Dynamo's single-node example). Each prefill instance has its own plan (one
// GPU's pool, printed beside the decode instance's) and its own step costs:
// one client's prompt takes longer on one GPU than on four. The aggregated
// arrangement runs the same eight GPUs as two instances of --tp 4.
TEST(CliSim, PrefillInstancesSizedApart) {
  const std::string w = WriteTempFile(
      "pdtp.yaml", "requests: 40\nclasses:\n  - name: chat\n    prompt: fixed:3000\n    output: fixed:150\n");
  const std::string base =
      "sim --model llama-3.1-70b --gpu h100-sxm --weights fp8 --tp 4 --max-model-len 3500 "
      "--gpu-memory-utilization 0.95 "
      "--repeat 1 --concurrency 1 --workload " +
      w + " ";
  const auto ttft = [](const std::string& json) {
    const auto doc = boost::json::parse(json);
    return doc.at("results").at(0).at("points").at(0).at("ttft_p50_s").to_number<double>();
  };
  const std::string split = base + "--prefill-replicas 4 ";
  auto one = RunGoodput(split + "--prefill-tp 1");
  ASSERT_EQ(one.exit_code, 0) << one.err;
  EXPECT_NE(one.out.find("4 prefill (x1, "), std::string::npos) << one.out;
  EXPECT_NE(one.out.find("engine: prefill instances (x1): GPU KV cache size: "), std::string::npos) << one.out;
  auto narrow = RunGoodput(split + "--prefill-tp 1 --json"), wide = RunGoodput(split + "--prefill-tp 4 --json");
  ASSERT_EQ(narrow.exit_code, 0) << narrow.err;
  ASSERT_EQ(wide.exit_code, 0) << wide.err;
  EXPECT_GT(ttft(narrow.out), 2 * ttft(wide.out));
  auto together = RunGoodput(split + "--prefill-tp 1 --aggregated true");
  ASSERT_EQ(together.exit_code, 0) << together.err;
  EXPECT_NE(together.out.find("a fleet of 2 instances"), std::string::npos) << together.out;
  ExpectEachFails(
      {{"--prefill-replicas 4 --prefill-tp 0", "--prefill-tp must be 1 to 1024"},
       {"--prefill-replicas 4 --prefill-tp 1 --kv-cache-memory 10GiB", "--prefill-tp 1: "},
       {"--prefill-tp 1", "give --prefill-replicas"},
       {"--prefill-replicas 3 --prefill-tp 1 --aggregated true", "7 GPUs (3 prefill x 1 + 1 decode x 4) do not"}},
      base);
  // `sim fleet --disaggregated` counts a split's GPUs with its prefill instances at their own size.
  const std::string fleet =
      "sim fleet --model llama-3.1-70b --gpu h100-sxm --weights fp8 --tp 4 --max-model-len 3500 "
      "--gpu-memory-utilization 0.95 --prefill-first --repeat 1 --requests 400 --rate 8 "
      "--workload " +
      kData + "/workloads/dynamo-70b-1node.yaml ";
  auto sized = RunGoodput(fleet + "--disaggregated --prefill-tp 1 --json");
  ASSERT_EQ(sized.exit_code, 0) << sized.err;
  const auto doc = boost::json::parse(sized.out).as_object();
  ASSERT_FALSE(doc.at("replicas").is_null() || doc.at("split").is_null()) << sized.out;
  const auto& found = doc.at("split").as_object();
  EXPECT_EQ(doc.at("gpus_per_prefill").as_int64(), 1);
  EXPECT_EQ(found.at("gpus").as_int64(),
            found.at("prefill_replicas").as_int64() + 4 * found.at("decode_replicas").as_int64());
  EXPECT_LT(found.at("gpus").as_int64(), doc.at("gpus").as_int64());
  auto alone = RunGoodput(fleet + "--prefill-tp 1");
  EXPECT_NE(alone.exit_code, 0);
  EXPECT_NE(alone.err.find("--prefill-tp sizes the prefill instances of a split: give --disaggregated"),
            std::string::npos)
      << alone.err;
}

// A number printed right after `key` in `out` (NAN when absent).
double NumberAfter(const std::string& out, const std::string& key) {
  const size_t at = out.find(key);
  return at == std::string::npos ? NAN : std::stod(out.substr(at + key.size()));
}

// DistServe's comparison (data/workloads/distserve-fig6.yaml: Llama-2-13B on
// A100s, 2 prefill + 1 decode instances against 3 colocated; the blog read
// 2.1x) beside the early-2024 vLLM it ran against: prompts in steps of their
// own (--prefill-first) and the engine's costs fitted to the blog's own
// one-phase figures, not to the gain: a prefill-only worker held 5.6
// requests/s, a decode-only one 10. Read as a fixed cost a step (vLLM's
// multi-step RFC: V0's host work "incurred on every decode"), 0.48 of the peak
// and 11 ms give 5.42 and 9.93 and a gain within 15% of 2.1 (1.92x; 5.66 and
// 1.83x before each token's norm and activation passes were counted); read as
// a cost a request (0.46 and 0.4 ms) about none (1.09x). docs/sim.md, "Prefill
// and decode apart", prints each command.
TEST(CliSim, DistServesGainFromItsOwnOnePhaseFigures) {
  const std::string base = "sim capacity --model llama-2-13b --gpu a100-80gb --repeat 1 --prefill-first --rate 2 ";
  const std::string per_step = base + "--compute-efficiency 0.48 --step-overhead 0.011 ";
  const std::string fig6 = "--workload " + kData + "/workloads/distserve-fig6.yaml ";
  const std::string prompts_only = WriteTempFile(
      "distserve-prefill.yaml",
      "requests: 2000\nwarmup: 10%\ncooldown: 10%\narrival: {type: poisson, rate: 2}\nclasses:\n  - name: chat\n"
      "    prompt: fixed:512\n    output: fixed:1\n    slo: ttft p90 <= 0.4s\n");
  const auto run = [](const std::string& args, const std::string& key) {
    auto r = RunGoodput(args);
    EXPECT_EQ(r.exit_code, 0) << args << "\n" << r.err;
    const double x = NumberAfter(r.out, key);
    EXPECT_FALSE(std::isnan(x)) << args << "\n" << r.out;
    return x;
  };
  EXPECT_NEAR(run(per_step + "--workload " + prompts_only, "capacity: load "), 5.6, 5.6 * 0.05);
  EXPECT_NEAR(run(per_step + fig6 + "--prefill-replicas 4 --decode-replicas 1", "capacity: load "), 10, 10 * 0.05);
  const std::string split = fig6 + "--prefill-replicas 2 --decode-replicas 1 --compare-aggregated";
  EXPECT_NEAR(run(per_step + split, "; gain "), 2.1, 2.1 * 0.15);
  EXPECT_LT(run(base + "--compute-efficiency 0.46 --per-request-cost 0.0004 " + split, "; gain "), 2.1 * 0.85);
}

// NVIDIA Dynamo's single-node comparison (data/workloads/dynamo-70b-1node.yaml:
// 4 x TP1 prefill + 1 x TP4 decode against 2 x TP4, 70B FP8 on H100s, at 38
// tokens/s a user; the source read about 1.6x), both under vLLM V0's host
// costs as the source ran (--engine vllm-v0). With answers of exactly 150
// tokens the aggregated clients move in waves and the simulator finds 1.27x;
// a 1% spread of the answers' lengths breaks the waves, and the gain comes
// within 15% of the source's (1.57x when written). docs/sim.md, "Prefill and
// decode apart".
TEST(CliSim, DynamosDisaggregationGainOutOfTheConvoy) {
  const std::string args =
      "sim capacity --model llama-3.1-70b --gpu h100-sxm --weights fp8 --tp 4 --max-model-len 3500 "
      "--max-num-batched-tokens 3500 --max-num-seqs 256 --block-size 128 --gpu-memory-utilization 0.95 "
      "--no-enable-prefix-caching --prefill-first -c 8 --max-load 256 --repeat 1 --prefill-replicas 4 --prefill-tp 1 "
      "--compare-aggregated --engine vllm-v0 --workload ";
  const auto gain = [&](const std::string& workload) {
    auto r = RunGoodput(args + workload);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    const double x = NumberAfter(r.out, "; gain ");
    EXPECT_FALSE(std::isnan(x)) << r.out;
    return x;
  };
  const std::string exact = kData + "/workloads/dynamo-70b-1node.yaml";
  const std::string spread =
      WriteTempFile("dynamo-spread.yaml",
                    "name: dynamo-70b-1node-spread\nseed: 1\nrequests: 2000\nwarmup: 10%\ncooldown: 10%\n"
                    "classes:\n  - name: chat\n    prompt: fixed:3000\n    output: lognormal:150,0.01\n"
                    "    slo: tpot p50 <= 26.3ms\n");
  const double in_waves = gain(exact), out_of_waves = gain(spread);
  EXPECT_LT(in_waves, 1.6 * 0.85);
  EXPECT_NEAR(out_of_waves, 1.6, 1.6 * 0.15);
}

}  // namespace
}  // namespace goodput
