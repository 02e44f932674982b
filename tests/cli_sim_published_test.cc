// End-to-end tests of `goodput sim` against published measurements: each
// runs the simulator as a user would and holds its figures near the source's
// (docs/calibration.md, "Validation against published measurements").

#include <string>
#include <vector>

#include <boost/json.hpp>
#include <gtest/gtest.h>

#include "support/run_command.h"

namespace goodput {
namespace {

using testing::RunGoodput;

const std::string kData = GOODPUT_SOURCE_DATA_DIR;

// The points of the first setting of a `goodput sim --json` output.
boost::json::array Points(const std::string& json_out) {
  return boost::json::parse(json_out).at("results").at(0).at("points").as_array();
}

// Published vLLM sweeps of Llama-3.1-8B (docs/calibration.md, "Validation against
// published measurements"): the catalog's efficiency for each card is fitted
// to its C=1 figure; the C=8 (A100) and C=4 (H100) figures are held out.
TEST(CliSim, ReproducesPublishedVllmSweeps) {
  const auto points = [](const std::string& gpu) {
    auto r = RunGoodput("sim --model llama-3.1-8b --gpu " + gpu + " --workload " + kData +
                        "/workloads/random-1024-128.yaml -c 1,4,8 --json");
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return Points(r.out);
  };
  const auto a100 = points("a100-40gb");
  const double decode = 1 / a100[0].at("tpot_p50_s").as_double();
  EXPECT_NEAR(decode / 75, 1, 0.03);  // about 75 tok/s
  const double batching =
      a100[2].at("throughput_tokens_per_s").as_double() / a100[0].at("throughput_tokens_per_s").as_double();
  // 6.6x from C=1 to C=8: -12% with full overlap, -14% with the catalog's 0.5.
  EXPECT_NEAR(batching / 6.6, 1, 0.15);
  const auto h100 = points("h100");
  // Held out since the H100's bandwidth is Azure's measurement of the card
  // rather than a fit to the C=1 figure: +2% and +7% with kernels counted.
  EXPECT_NEAR(h100[0].at("tpot_p50_s").as_double() / 6.48e-3, 1, 0.05);
  EXPECT_NEAR(h100[1].at("tpot_p50_s").as_double() / 6.59e-3, 1, 0.08);
}

// gpustack's published vLLM runs of gpt-oss (docs/calibration.md, "Validation against
// published measurements"): every prompt sent at once, TTFT/TPOT p50. Bounds:
// fitted rows 5%, held-out rows as far as they were off when the fit was
// made plus a margin.
// The first point of `goodput sim DEPLOYMENT --workload data/workloads/random-BURST-burst.yaml`.
boost::json::object BurstPoint(const std::string& deployment, const std::string& burst) {
  auto r = RunGoodput("sim " + deployment + " --workload " + kData + "/workloads/random-" + burst +
                      "-burst.yaml --repeat 1 --json");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return Points(r.out).at(0).as_object();
}
// The cards' MXFP4 efficiencies were fitted over the GPU work alone (--engine none).
boost::json::object GptOssPoint(const std::string& gpu, const std::string& model, int tp, const std::string& prompt) {
  return BurstPoint("--model " + model + " --gpu " + gpu + " --engine none --tp " + std::to_string(tp) +
                        (model == "gpt-oss-120b" && tp == 1 ? " --max-model-len 32768" : ""),
                    prompt);
}
double Ttft(const boost::json::object& p) { return p.at("ttft_p50_s").as_double(); }
double Tpot(const boost::json::object& p) { return p.at("tpot_p50_s").as_double(); }

// A published burst's TTFT and TPOT p50 (seconds), each with the relative
// error allowed; a TPOT of 0 is not compared.
struct PublishedBurst {
  const char* burst;
  double ttft_s, ttft_bound;
  double tpot_s = 0, tpot_bound = 0;
};
void ExpectNearPublished(const std::string& deployment, const std::vector<PublishedBurst>& rows) {
  for (const PublishedBurst& row : rows) {
    const auto p = BurstPoint(deployment, row.burst);
    EXPECT_NEAR(Ttft(p) / row.ttft_s, 1, row.ttft_bound) << row.burst;
    if (row.tpot_s > 0) {
      EXPECT_NEAR(Tpot(p) / row.tpot_s, 1, row.tpot_bound) << row.burst;
    }
  }
}

// The H100 entry's MXFP4 matmul efficiency is fitted to the 120B's 32K TTFT
// at TP=1; tensor parallelism and the 20B are held out.
TEST(CliSim, ReproducesPublishedGptOssRunsOnH100) {
  const auto point = [](const std::string& model, int tp, const std::string& prompt) {
    return GptOssPoint("h100", model, tp, prompt);
  };
  const auto long_prompts = point("gpt-oss-120b", 1, "32000");
  EXPECT_NEAR(Ttft(long_prompts) / 99.44, 1, 0.05);  // fitted
  const auto tp2 = point("gpt-oss-120b", 2, "32000");
  EXPECT_NEAR(Ttft(tp2) / 48.67, 1, 0.10);
  EXPECT_NEAR(Tpot(tp2) / 0.25227, 1, 0.10);
  const auto short_prompts = point("gpt-oss-120b", 1, "2000");
  EXPECT_NEAR(Ttft(short_prompts) / 35.66, 1, 0.15);
  // Held out and KV-bound: 13% slow with the 3.00 GiB pool the plan leaves once
  // the profiling run's sampler peak is counted as vLLM measures it (under the
  // vLLM entry's host costs 14-20% at 32K-2K, against 43-61% with the 3.57 GiB
  // it left before).
  EXPECT_NEAR(Tpot(long_prompts) / 0.0237, 1, 0.20);
  EXPECT_NEAR(Tpot(short_prompts) / 0.0429, 1, 0.20);
  EXPECT_NEAR(Ttft(point("gpt-oss-20b", 1, "32000")) / 53.54, 1, 0.20);
  EXPECT_NEAR(Ttft(point("gpt-oss-20b", 1, "4000")) / 30.82, 1, 0.15);
  EXPECT_NEAR(Tpot(point("gpt-oss-20b", 1, "2000")) / 0.15920, 1, 0.20);
}

// The A100 entry's MXFP4 matmul and attention efficiencies are fitted to the
// 120B's 32K and 2K TTFTs; the rest is held out.
TEST(CliSim, ReproducesPublishedGptOssRunsOnA100) {
  const auto point = [](const std::string& model, const std::string& prompt) {
    return GptOssPoint("a100-80gb", model, 1, prompt);
  };
  const auto long_prompts = point("gpt-oss-120b", "32000");
  EXPECT_NEAR(Ttft(long_prompts) / 368.71, 1, 0.05);                  // fitted
  EXPECT_NEAR(Ttft(point("gpt-oss-120b", "2000")) / 61.76, 1, 0.05);  // fitted
  EXPECT_NEAR(Ttft(point("gpt-oss-120b", "4000")) / 134.01, 1, 0.10);
  EXPECT_NEAR(Ttft(point("gpt-oss-20b", "32000")) / 219.66, 1, 0.15);
  EXPECT_NEAR(Ttft(point("gpt-oss-20b", "2000")) / 32.08, 1, 0.20);
  // Held out and KV-bound: 33% fast with the pool that counts Marlin's
  // padded experts, twice the published figure without it.
  EXPECT_NEAR(Tpot(long_prompts) / 0.228, 1, 0.40);
}

// gpustack's vLLM 0.11.0 runs of Qwen3-32B in BF16 on one A100 80GB
// (docs/performance-lab/qwen3-32b/a100.md, --max-model-len 32768 as its
// engine run states): nothing is fitted to them, so they test the A100
// entry's defaults for a dense 16-bit model. Bounds: as far as they were off
// when added (TTFT +9..+11%, TPOT -5%, -0%; +8..+11%, -6%, -1% since a step
// no longer reads the untied input embedding; +14..+18%, +1%, +7% with the
// catalog's overlap of 0.5, half the weights' read time showing beside a
// prefill's compute) plus a margin.
TEST(CliSim, PredictsPublishedQwen3DenseRunsOnA100WithTheCardsDefaults) {
  ExpectNearPublished("--model qwen3-32b --gpu a100-80gb --max-model-len 32768",
                      {{"32000-77", 892.71, 0.20},
                       {"4000-200", 564.71, 0.20, 0.09640, 0.10},
                       {"2000-100", 209.11, 0.22, 0.14396, 0.10}});
}

// gpustack's vLLM 0.11.0 runs of DeepSeek-R1-0528 on eight H200 at TP=8
// (docs/performance-lab/deepseek-r1/h200.md), with two flags fitted to the 4K
// TTFT and to decoding four at a time (--compute-efficiency 0.165
// --step-overhead 0.0141, with full overlap and no kernels as first made);
// the bursts' other figures held out. Bounds: as far as they were off when
// fitted (32K +14% / +6%, 2K -1% / +8%, 4K TPOT +9%) plus a margin. With the
// H200's memory at its nominal 131.32 GiB rather than CUDA's 139.81 the fit
// was 0.28 (32K +4% / -22%, 2K -7% / -11%, 4K TPOT -16%); before each GPU
// multiplied MLA's down-projections and the routers whole, as vLLM does, the
// pair was 0.105 / 14.3 ms and the TPOTs within 11%.
TEST(CliSim, PredictsPublishedDeepSeekR1RunsOnEightH200FromTwoFittedFactors) {
  ExpectNearPublished(
      "--model deepseek-v3 --gpu h200 --tp 8 --engine none --kernel-latency 0 --overlap 1 --compute-efficiency 0.165 "
      "--step-overhead 0.0141",
      {{"4000-200", 61.95, 0.05, 0.17737, 0.15},
       {"32000", 101.16, 0.18, 0.40072, 0.12},
       {"2000-100", 27.56, 0.08, 0.27656, 0.14}});
}

// FP8 experts on Hopper run at vLLM's Triton MoE kernel rate (the H100 entry's
// expert efficiency, 0.10 of the FP8 peak; CostModel checks it against the
// published kernel timings): a burst of 4K prompts to Qwen3-30B-A3B, whose
// prefill is mostly routed-expert FLOPs, takes over twice as long to its
// first tokens as with the experts at the dense 0.6. --expert-efficiency
// overrides the entry's; 0 puts them back at the other matmuls' efficiency.
TEST(CliSim, Fp8ExpertsOnHopperRunAtTheMoeKernelsRate) {
  const std::string base = "sim --model qwen3-30b-a3b --gpu h100 --weights fp8 --workload " + kData +
                           "/workloads/random-4000-200-burst.yaml --requests 50 --repeat 1 --json";
  const auto first_ttft = [&](const std::string& flags) {
    auto r = RunGoodput(base + flags);
    EXPECT_EQ(r.exit_code, 0) << flags << "\n" << r.err;
    return r.exit_code == 0 ? Ttft(Points(r.out).at(0).as_object()) : 0.0;
  };
  const double entry = first_ttft(""), dense = first_ttft(" --expert-efficiency 0.6");
  EXPECT_GT(entry, 2 * dense);
  EXPECT_DOUBLE_EQ(first_ttft(" --expert-efficiency 0"), dense) << "0: the other matmuls' efficiency, 0.6 on an H100";
  auto bad = RunGoodput(base + " --expert-efficiency 1.5");
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_NE(bad.err.find("expert_efficiency must be in [0, 1]"), std::string::npos) << bad.err;
}

// gpustack's vLLM 0.11.0 runs of Qwen3-8B in BF16 on one H100 SXM
// (docs/performance-lab/qwen3-8b/h100-latency.md): ShareGPT through the chat
// endpoint, 100 prompts, 1, 2, 4 and 8 at a time; TTFT and TPOT p50 (s).
struct PublishedLoad {
  double ttft_s, tpot_s;
};
constexpr PublishedLoad kQwen3_8BOnH100[] = {{0.06038, 0.00722}, {0.06478, 0.00730}, {0.06026, 0.00740},
                                             {0.06077, 0.00767}};

boost::json::array Qwen3_8BPoints(const std::string& factors) {
  auto r = RunGoodput("sim --model qwen3-8b --gpu h100 " + factors + " --workload " + kData +
                      "/workloads/sharegpt-qwen3.yaml -c 1,2,4,8 --json");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return Points(r.out);
}

// The catalog's H100 entry, its bandwidth efficiency fitted to Llama-3.1-8B
// on a later vLLM (0.21.0), holds Qwen3-8B's TPOT out: 9-12% fast when added,
// 10-13% since a step no longer reads the untied input embedding, 6-10% with
// vLLM's host costs (data/hardware/engines.json) and the entry refitted beside
// them; -3..+0% with each kernel's latency counted (Qwen3's 12 a layer) and
// the H100's measured bandwidth. Without a front end the first token was
// 80-90% fast; vLLM's 50 ms front end (fitted to the validation set, which
// holds these rows too) gives it within -11..+4%.
TEST(CliSim, PredictsPublishedQwen3_8BDecodesOnH100WithTheCatalogEntry) {
  const auto points = Qwen3_8BPoints("");
  for (size_t i = 0; i < points.size(); ++i) {
    const double ratio = Tpot(points[i].as_object()) / kQwen3_8BOnH100[i].tpot_s;
    EXPECT_LT(ratio, 1.05) << i;
    EXPECT_GT(ratio, 0.93) << i;
    EXPECT_NEAR(Ttft(points[i].as_object()) / kQwen3_8BOnH100[i].ttft_s, 1, 0.15) << i;
  }
}

// The three factors `goodput calibrate published data/published/qwen3-8b-h100.yaml
// --fit bandwidth-efficiency,per-request-cost,frontend-latency` fits to C=1's
// TTFT and TPOT and C=8's TPOT (0.679, 38 us, 53.2 ms; CliCalibrate checks
// the fit): C=2 and C=4 TPOT and C=2..8 TTFT are held out (within 1% and
// -1..+11% when added). The front end's 53 ms also gives DeepSeek-R1's first
// token at four at a time on eight H200 (vLLM 0.11.0, the same lab's chat
// runs; its factors fitted to its own TTFT of a 4K burst and its TPOT):
// -8% when added, 53% fast without it.
TEST(CliSim, PredictsPublishedFirstTokensWithTheFrontEndsLatency) {
  // The factors as fitted before kernels were counted and with full overlap, so without them.
  const auto points = Qwen3_8BPoints(
      "--engine none --kernel-latency 0 --overlap 1 --bandwidth-efficiency 0.679 "
      "--per-request-cost 38e-6 --frontend-latency 0.0532");
  for (size_t i = 0; i < points.size(); ++i) {
    EXPECT_NEAR(Tpot(points[i].as_object()) / kQwen3_8BOnH100[i].tpot_s, 1, 0.03) << i;
    EXPECT_NEAR(Ttft(points[i].as_object()) / kQwen3_8BOnH100[i].ttft_s, 1, 0.15) << i;
  }
  const std::string r1 =
      "sim --model deepseek-v3 --gpu h200 --tp 8 --engine none --kernel-latency 0 --overlap 1 --compute-efficiency "
      "0.165 --step-overhead 0.0141 "
      "--workload " +
      kData + "/workloads/sharegpt-means.yaml --concurrency 4 --repeat 1 --json";
  auto without = RunGoodput(r1), with = RunGoodput(r1 + " --frontend-latency 0.0532");
  ASSERT_EQ(without.exit_code, 0) << without.err;
  ASSERT_EQ(with.exit_code, 0) << with.err;
  const auto first = [](const std::string& out) {
    return Points(out).at(0).as_object();
  };
  EXPECT_NEAR(Ttft(first(with.out)) / 0.11753, 1, 0.10);
  EXPECT_LT(Ttft(first(without.out)) / 0.11753, 0.6);
  EXPECT_NEAR(Tpot(first(with.out)) / Tpot(first(without.out)), 1, 0.01) << "the front end is not a step cost";
  auto text = RunGoodput("sim --model qwen3-8b --gpu h100 --engine none --frontend-latency 0.0532 --workload " + kData +
                         "/workloads/sharegpt-qwen3.yaml -c 1 --repeat 1");
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("policy fcfs, front end 53.2 ms)"), std::string::npos) << text.out;
  auto bad = RunGoodput(r1 + " --frontend-latency -0.01");
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_NE(bad.err.find("--frontend-latency"), std::string::npos) << bad.err;
}

// gpustack's vLLM 0.17.1 runs of the hybrid Qwen3.5-9B on one H100
// (docs/performance-lab/qwen3.5-9b/h100-latency.md): 1,000 ShareGPT requests
// at a constant 4, 8 and 16 a second, mean request latency (guidellm's TPOT
// medians there are not usable). Held out with the catalog entry: -4% and
// -9% at 4 and 8 when added, -13% and -17% since a step reads neither the
// vision tower nor the untied input embedding (15.7% of the weights; the
// entry was refitted for the embedding, Llama's 6.5%): the hybrid's steps
// cost vLLM more than the state and KV traffic counted; -14% and -18% since
// --rate keeps the file's even gaps. At 16, 42% fast and not explained. With
// vLLM's host costs (data/hardware/engines.json, fitted to the validation set,
// which does not hold these rows) and the H100 entry refitted beside them:
// -4%, +3% and +6%; with the catalog's overlap of 0.5 (half of a phase's
// shorter time showing beside the longer, from DeepGEMM's GEMM timings),
// +3%, +14% and +35%: the mixed prefill-and-decode steps of a hybrid at
// rising rates are where the full overlap had fit; +3%, +15% and +41% once a
// step's norm and activation passes were counted. Each is held where it is,
// so that a change that moves it is seen.
TEST(CliSim, PredictsPublishedHybridQwen35RequestLatencyOnH100) {
  auto r = RunGoodput("sim --model qwen3.5-9b --gpu h100 --max-model-len 32768 --workload " + kData +
                      "/workloads/sharegpt-qwen3.5-constant.yaml --rate 4,8,16 --repeat 1 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto points = Points(r.out);
  ASSERT_EQ(points.size(), 3u);
  const auto mean_latency = [&](size_t i) {
    return points[i].at("latency").at("e2e").at("mean_s").to_number<double>();
  };
  EXPECT_NEAR(mean_latency(0) / 2.33, 1.03, 0.06);
  EXPECT_NEAR(mean_latency(1) / 2.62, 1.15, 0.06);
  EXPECT_NEAR(mean_latency(2) / 4.37, 1.41, 0.08);
  // The throughput page's 32K prompts at a constant 1/s (qwen3.5-9b/h100.md,
  // Long Context): mean latency -26%, first token p50 -15% when added; -8%
  // and -8% with the catalog's overlap of 0.5. At
  // even gaps no request waits for another's prefill (p99 within 1% of p50,
  // as published); with Poisson gaps (what --rate gave before it kept the
  // file's shape) the first token p50 was +135%. Counting each token's norm
  // and activation passes took the 8,192-token chunk steps from 235 to 248 ms
  // (the first token -8% -> -2%) and the mean latency -8% -> +53%: at 1/s the
  // four chunks fill 95-99% of each second, so the decodes between them swing
  // with a few percent of step time. The published TPOT (69 ms: 14.5 steps a
  // second, four of them chunks) puts vLLM's chunk step near 213 ms with
  // 14 ms decodes, and the first token's rest (about 170 ms) in its front end,
  // which tokenizes the 32,000 tokens: the hybrid's chunk steps are slow here
  // with or without those passes.
  auto long_context = RunGoodput("sim --model qwen3.5-9b --gpu h100 --max-model-len 32768 --workload " + kData +
                                 "/workloads/random-32000-constant.yaml --rate 1 --repeat 1 --json");
  ASSERT_EQ(long_context.exit_code, 0) << long_context.err;
  const auto p = Points(long_context.out).at(0).as_object();
  EXPECT_NEAR(p.at("latency").at("e2e").at("mean_s").to_number<double>() / 7.88, 1.53, 0.08);
  EXPECT_NEAR(Ttft(p) / 1.020, 0.98, 0.08);
  EXPECT_LT(p.at("ttft_p99_s").to_number<double>() / Ttft(p), 1.05);
}

}  // namespace
}  // namespace goodput
