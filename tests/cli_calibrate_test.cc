// End-to-end tests of `goodput calibrate` and of the simulator's hardware
// flags (--calibration, sim:FILE, a card by its figures, expert parallelism).

#include <cmath>
#include <fstream>
#include <sstream>
#include <utility>

#include <boost/json.hpp>
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "support/temp_file.h"

#include "support/run_command.h"

namespace goodput {
namespace {

using testing::CommandResult;
using testing::RunGoodput;

const std::string kData = GOODPUT_SOURCE_DATA_DIR;

using testing::TempPath;

std::string ReadFile(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

// Figure `key` of the first point of a --json result.
double FirstPoint(const std::string& json_out, const char* key) {
  return boost::json::parse(json_out).at("results").at(0).at("points").at(0).at(key).to_number<double>();
}

double Throughput(const std::string& json_out) { return FirstPoint(json_out, "throughput_tokens_per_s"); }

// goodput-tiny's steps (milliseconds each) measured and fitted, written to a
// file that sim --calibration and bench --target sim:FILE then run on.
TEST(CliCalibrate, StepsWriteAFileTheSimulatorRuns) {
  const std::string file = TempPath("tiny-cal.json");
  auto r = RunGoodput("calibrate steps --model goodput-tiny --kv-cache-memory 64MiB --repeats 1 -o " + file);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("rms log error"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("prefill 1024"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("written: " + file), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("goodput serve --scheduling-policy slo --step-calibration " + file), std::string::npos) << r.out;
  auto doc = boost::json::parse(ReadFile(file));
  EXPECT_EQ(doc.at("goodput_calibration").as_int64(), 1);
  EXPECT_TRUE(doc.at("hardware").at("cpu").as_bool());
  const std::string wl = " --workload " + kData + "/workloads/chat-cpu.yaml --concurrency 4 --repeat 1 --json";
  auto sim = RunGoodput("sim --model goodput-tiny --kv-cache-memory 64MiB --calibration " + file + wl);
  ASSERT_EQ(sim.exit_code, 0) << sim.err;
  EXPECT_GT(Throughput(sim.out), 0);
  auto bench = RunGoodput("bench --target sim:" + file + " --model goodput-tiny --no-ledger --serve-args "
                          "'--kv-cache-memory 64MiB'" + wl);
  ASSERT_EQ(bench.exit_code, 0) << bench.err;
  // The same simulator with the same settings and seeds: the same figure.
  EXPECT_DOUBLE_EQ(Throughput(bench.out), Throughput(sim.out));
}

// A CPU engine with known factors, as goodput calibrate writes one.
constexpr char kTinyCalibration[] = R"({"goodput_calibration": 1, "source": "test", "model": "goodput-tiny",
  "hardware": {"name": "cpu", "cpu": true, "memory_bytes": 1073741824},
  "factors": {"peak_flops": 1e11, "bandwidth": 2e10, "compute_efficiency": 0.8,
              "efficiency_curve": [[1, 0.3], [64, 1.0], [256, 0.8]], "attention_curve": [[1, 0.2], [256, 0.3]],
              "bandwidth_efficiency": 1, "step_overhead_s": 0.0005, "per_sequence_s": 0.0001, "overlap": 0.5}})";

// The simulator logs its steps as goodput serve does: one line per simulated
// step, and a fit to them gives back the cost model that timed them.
TEST(CliCalibrate, SimulatedStepsAreLoggedAsServesAndFitBack) {
  const std::string cal = testing::WriteTempFile("known-cal.json", kTinyCalibration);
  const std::string log = TempPath("sim-steps.log");
  auto sim =
      RunGoodput("sim --model goodput-tiny --kv-cache-memory 64MiB --calibration " + cal + " --workload " + kData +
                 "/workloads/chat-cpu.yaml --concurrency 4 --requests 40 --repeat 1 --max-repeat 1 --json "
                 "--step-log " +
                 log);
  ASSERT_EQ(sim.exit_code, 0) << sim.err;
  const double steps = FirstPoint(sim.out, "steps");
  std::ifstream in(log);
  std::string line;
  ASSERT_TRUE(std::getline(in, line));
  EXPECT_EQ(line.rfind("# goodput step log", 0), 0u) << line;
  int lines = 0;
  while (std::getline(in, line)) lines += !line.empty();
  EXPECT_EQ(lines, steps) << "one line per simulated step";
  const std::string fit = TempPath("refit.json");
  auto r =
      RunGoodput("calibrate steps --model goodput-tiny --kv-cache-memory 64MiB --from-step-log " + log + " -o " + fit);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const double rms = boost::json::parse(ReadFile(fit)).at("fit").at("rms_log_error").to_number<double>();
  EXPECT_LT(rms, 0.03) << "the simulated steps follow one cost model, which the fit finds again\n" << r.out;
  auto bad = RunGoodput("sim --model goodput-tiny --kv-cache-memory 64MiB --calibration " + cal + " --workload " +
                        kData + "/workloads/chat-cpu.yaml --concurrency 4 --step-log /nonexistent-dir/steps.log");
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_NE(bad.err.find("cannot write the step log /nonexistent-dir/steps.log"), std::string::npos) << bad.err;
}

// A calibration fitted on one model runs another, and says so wherever the
// target is named: it is not silent, and not refused (its factors are mostly
// the hardware's and the engine's).
TEST(CliCalibrate, AnotherModelsCalibrationSaysWhoseItWas) {
  const std::string cal = testing::WriteTempFile("known-cal-other.json", kTinyCalibration);
  const std::string wl = " --workload " + kData + "/workloads/chat-cpu.yaml --concurrency 2 --requests 20 --repeat 1";
  auto same = RunGoodput("sim --model goodput-tiny --kv-cache-memory 64MiB --calibration " + cal + wl);
  ASSERT_EQ(same.exit_code, 0) << same.err;
  EXPECT_EQ(same.out.find("(fitted on "), std::string::npos) << same.out;
  auto other = RunGoodput("sim --model goodput-small --kv-cache-memory 256MiB --calibration " + cal + wl);
  ASSERT_EQ(other.exit_code, 0) << other.err;
  EXPECT_NE(other.out.find("target: sim:" + cal + " (fitted on goodput-tiny) (goodput-small x1"), std::string::npos)
      << other.out;
}

TEST(CliCalibrate, BadCalibrationFilesAndFlagsFailCleanly) {
  const std::string wl = " --workload " + kData + "/workloads/chat.yaml --concurrency 4 --requests 50";
  const std::string broken = TempPath("broken-cal.json");
  std::ofstream(broken) << "{\"goodput_calibration\": 1, \"hardware\": {}, ";
  for (const auto& [args, message] : std::vector<std::pair<std::string, std::string>>{
           {"sim --model llama-3.1-8b --calibration /nonexistent.json" + wl, "/nonexistent.json"},
           {"sim --model llama-3.1-8b --calibration " + broken + wl, broken},
           {"sim --model llama-3.1-8b --gpu h100 --calibration " + broken + wl, "not both"},
           {"calibrate steps --model goodput-tiny --repeats 0", "--repeats must be at least 1"},
           {"calibrate steps --model no-such-model", "no-such-model"},
           {"calibrate ledger 1 --ledger /nonexistent.db --model llama-3.1-8b --gpu h100", "no ledger at"},
           {"calibrate ledger 1 --model llama-3.1-8b --gpu h100 --ledger " + broken, broken},
           {"calibrate published /nonexistent.yaml --model llama-3.1-8b --gpu h100", "cannot read published figures"},
           {"calibrate published " + broken + " --model llama-3.1-8b --gpu h100", broken},
           {"calibrate published " + kData +
                "/published/deepseek-r1-h200.yaml --model deepseek-v3 --gpu h200 --tp 8 "
                "--fit compute-efficiency,warp",
            "unknown factor 'warp'"},
           {"calibrate published " + kData + "/published/deepseek-r1-h200.yaml --gpu h200 --tp 8",
            "--model is required"},
       }) {
    auto r = RunGoodput(args);
    EXPECT_NE(r.exit_code, 0) << args;
    EXPECT_TRUE(r.out.empty()) << args << "\n" << r.out;
    EXPECT_NE(r.err.find(message), std::string::npos) << args << "\n" << r.err;
  }
}

// `goodput calibrate published ARGS -o OUT`: what it printed, and the factors
// of the file it wrote (null when it failed).
struct PublishedFit {
  CommandResult run;
  boost::json::value factors;
};
PublishedFit FitPublished(const std::string& args, const std::string& out) {
  PublishedFit fit{RunGoodput("calibrate published " + args + " -o " + out), nullptr};
  if (fit.run.exit_code == 0) fit.factors = boost::json::parse(ReadFile(out)).at("factors");
  return fit;
}

// docs/calibration.md's fit to gpustack's DeepSeek-R1 runs on 8 x H200: its two
// factors (over the GPU work alone, --engine none, as the docs made them) from
// one prefill-bound and one decode-bound figure, which the
// calibration then gives back. Its 1,866 kernels a step at the H200's 3 us
// now carry 5.6 ms of what the step overhead once took (14.3 ms then); with
// half the compute showing beside the memory time (the catalog's overlap)
// the prefill fits a compute efficiency of 0.218 for the dense matmuls, the
// routed experts at the H200 entry's FP8 MoE kernel rate (0.10), 0.190 before
// the norms' and the FFN activation's passes over the activations were
// counted (CostModel::ElementwiseSeconds) — the prompt's matmuls take less of
// the published TTFT once those passes take their share: the bursts
// are KV-bound, and the fit was 0.351 with the H200's memory at its nominal
// 131.32 GiB rather than CUDA's 139.81 (a fifth less KV pool). It was 0.131
// while each GPU multiplied an eighth of MLA's down-projections and the
// routers, which vLLM holds and multiplies whole on every GPU (0.111 for all
// matmuls before the experts had their own).
TEST(CliCalibrate, PublishedFiguresWriteTheCalibrationThatGivesThemBack) {
  const std::string out = TempPath("r1-h200.json");
  const PublishedFit fit = FitPublished(kData +
                                            "/published/deepseek-r1-h200.yaml --model deepseek-v3 --gpu h200 "
                                            "--tp 8 --engine none --fit compute-efficiency,step-overhead",
                                        out);
  const CommandResult& r = fit.run;
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("random-4000-200-burst at load batch: TTFT p50"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("gpustack performance lab"), std::string::npos) << r.out;
  const auto& f = fit.factors;
  EXPECT_NEAR(f.at("compute_efficiency").to_number<double>(), 0.218, 0.005);
  EXPECT_DOUBLE_EQ(f.at("expert_efficiency").to_number<double>(), 0.10);  // not fitted: the entry's
  EXPECT_NEAR(f.at("step_overhead_s").to_number<double>(), 0.0143 - 1866 * 3e-6, 0.0007);
  EXPECT_DOUBLE_EQ(f.at("bandwidth_efficiency").to_number<double>(), 0.86);  // not fitted: the entry's
  auto sim = RunGoodput("sim --model deepseek-v3 --tp 8 --calibration " + out + " --workload " + kData +
                        "/workloads/sharegpt-means.yaml --concurrency 4 --repeat 1 --json");
  ASSERT_EQ(sim.exit_code, 0) << sim.err;
  EXPECT_NEAR(FirstPoint(sim.out, "tpot_p50_s") / 0.01913, 1, 0.02);
}

// The same lab's 4K burst fits the routed experts' own efficiency, the rest
// the catalog's: 0.073 of the H200's FP8 peak, beside the 0.10 the H200 entry
// takes from vLLM's Triton MoE kernel timed on another model's layer (whose
// figures leave this TTFT 16% fast; 0.091 and 5% with the H200's memory at
// its nominal 131.32 GiB, 0.070 and 19% while each GPU multiplied an eighth
// of MLA's down-projections and the routers).
TEST(CliCalibrate, PublishedFiguresFitTheRoutedExpertsEfficiency) {
  const std::string figures = testing::WriteTempFile("r1-4k.yaml",
                                                     "source: gpustack, deepseek-r1/h200.md\npoints:\n"
                                                     "  - workload: random-4000-200-burst.yaml\n"
                                                     "    ttft_p50_s: 61.95274\n");
  const PublishedFit fit =
      FitPublished(figures + " --model deepseek-v3 --gpu h200 --tp 8 --fit expert-efficiency", TempPath("r1-x.json"));
  ASSERT_EQ(fit.run.exit_code, 0) << fit.run.err;
  EXPECT_NE(fit.run.out.find("routed experts: efficiency 0.0"), std::string::npos) << fit.run.out;
  const auto& f = fit.factors;
  EXPECT_NEAR(f.at("expert_efficiency").to_number<double>(), 0.073, 0.005);
  EXPECT_DOUBLE_EQ(f.at("compute_efficiency").to_number<double>(), 0.6);  // not fitted: the entry's
}

// Qwen3-8B on one H100 (data/published/qwen3-8b-h100.yaml: C=1 TTFT and
// TPOT, C=8 TPOT) tells three factors apart: the bandwidth efficiency (C=1's
// decode), a request's cost in a step (C=8 over C=1) and the front end's
// latency (C=1's first token less its prefill). The file writes them and
// prints the front end; CliSim holds the other loads out with them.
TEST(CliCalibrate, PublishedFiguresFitTheFrontEndsLatency) {
  const std::string out = TempPath("qwen3-8b-h100.json");
  auto r = RunGoodput("calibrate published " + kData +
                      "/published/qwen3-8b-h100.yaml --model qwen3-8b --gpu h100 "
                      "--engine none --fit bandwidth-efficiency,per-request-cost,frontend-latency -o " +
                      out);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("front end: 49.7"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("evaluation budget"), std::string::npos) << "three figures, three factors: an exact fit";
  const auto f = boost::json::parse(ReadFile(out)).at("factors").as_object();
  // With Qwen3's 437 kernels a step counted (1.3 ms at the H100's 3 us) the
  // decode leaves the weights 0.84 of the datasheet bandwidth (0.68 before
  // kernels were counted), near Azure's measured 0.89. Half of C=8's compute
  // shows beside its memory time (the catalog's overlap), which leaves a
  // request 15 us of the step (19 us before each token's norm and activation
  // passes were counted, 40 us with full overlap).
  EXPECT_NEAR(f.at("bandwidth_efficiency").to_number<double>(), 0.845, 0.005);
  EXPECT_NEAR(f.at("per_sequence_s").to_number<double>(), 15.3e-6, 3e-6);
  EXPECT_NEAR(f.at("frontend_latency_s").to_number<double>(), 0.0497, 0.001);
  EXPECT_EQ(boost::json::parse(ReadFile(out)).at("weight_precision").as_string(), "bf16");
  // Asked for FP8 weights, the BF16 fit is carried through the H100's entry:
  // the same prefill-bound burst as the entry with the fitted factors gives,
  // well faster than at BF16 (FP8's matmul peak is twice BF16's).
  const std::string burst = " --workload " + kData + "/workloads/random-2000-100-burst.yaml --repeat 1 --json";
  const auto ttft = [&](const std::string& how) {
    auto sim = RunGoodput("sim --model qwen3-8b " + how + burst);
    EXPECT_EQ(sim.exit_code, 0) << sim.err;
    return sim.exit_code == 0 ? FirstPoint(sim.out, "ttft_p50_s") : 0.0;
  };
  const double carried = ttft("--calibration " + out + " --weights fp8");
  const double entry = ttft(fmt::format("--gpu h100 --engine none --weights fp8 --bandwidth-efficiency {} "
                                        "--per-request-cost {} "
                                        "--frontend-latency {}",
                                        f.at("bandwidth_efficiency").to_number<double>(),
                                        f.at("per_sequence_s").to_number<double>(),
                                        f.at("frontend_latency_s").to_number<double>()));
  EXPECT_NEAR(carried / entry, 1, 0.001);
  EXPECT_LT(carried, 0.7 * ttft("--calibration " + out));
}

// A calibration of a catalog card keeps its usable memory: the simulator run
// on it plans the same KV pool as the fit did and gives the fitted figure
// back (it planned with the nominal 80 GiB before, and came out 6% fast).
TEST(CliCalibrate, ACalibratedCardKeepsItsUsableMemory) {
  const std::string out = TempPath("qwen3-32b-a100.json");
  const std::string deployment = "--model qwen3-32b --max-model-len 32768";
  auto r = RunGoodput("calibrate published " + kData + "/published/qwen3-32b-a100.yaml --gpu a100-80gb " + deployment +
                      " --fit compute-efficiency -o " + out);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto sim = RunGoodput("sim " + deployment + " --calibration " + out + " --workload " + kData +
                        "/workloads/random-4000-200-burst.yaml --repeat 1 --json");
  ASSERT_EQ(sim.exit_code, 0) << sim.err;
  EXPECT_NEAR(FirstPoint(sim.out, "ttft_p50_s") / 564.706, 1, 0.01);
}

// A chat.yaml sweep on the H100 simulator at `loads` (with --requests 200),
// kept in ledger `name`, then fitted back with one evaluation: the fit's
// output and its rms log error at the very factors that made the run.
std::pair<std::string, double> FitAtTheRunsOwnFactors(const std::string& name, const std::string& loads) {
  const std::string db = TempPath(name + ".db");
  std::remove(db.c_str());
  auto rec = RunGoodput("sweep --target sim:h100 --model llama-3.1-8b --workload " + kData +
                        "/workloads/chat.yaml --requests 200 " + loads + " --ledger " + db +
                        " --serve-args '--max-model-len 32k'");
  EXPECT_EQ(rec.exit_code, 0) << rec.err;
  const std::string out = TempPath(name + ".json");
  auto fit = RunGoodput("calibrate ledger 1 --ledger " + db + " --model llama-3.1-8b --gpu h100 --max-model-len 32k "
                        "--fit bandwidth-efficiency --max-evaluations 1 -o " + out);
  EXPECT_EQ(fit.exit_code, 0) << fit.err;
  if (fit.exit_code != 0) return {fit.out, 1};
  return {fit.out, boost::json::parse(ReadFile(out)).at("fit").at("rms_log_error").to_number<double>()};
}

// A ledger run is simulated as it ran: with the request count it was started
// with (`--requests`, which the stored workload file does not carry) and each
// of its repetitions (a point's figures are their medians). Fitted from the
// factors that made the run, the simulator gives its figures back exactly;
// before, it ran the file's 2,000 requests (capped at 400) once and missed
// by up to 8%.
TEST(CliCalibrate, ALedgerFitSimulatesTheRunAsItRan) {
  auto [out, rms] = FitAtTheRunsOwnFactors("as-run", "--concurrency 4,32 --repeat 2");
  EXPECT_NE(out.find("load 32: throughput"), std::string::npos) << out;
  EXPECT_LT(rms, 1e-4) << out;
}

// Near-even arrivals (gamma of shape 1000, a constant profile) are simulated
// as they ran: the stored point keeps their shape, where it used to read back
// as Poisson and the fit at the very factors of the run missed its TTFT p50
// at 16/s by 25% (rms log error 0.108).
TEST(CliCalibrate, ALedgerFitKeepsTheRunsArrivalShape) {
  auto [out, rms] = FitAtTheRunsOwnFactors("gamma-run", "--rate 4,16 --burstiness 1000 --repeat 1");
  EXPECT_NE(out.find("load 16/s: TTFT p50"), std::string::npos) << out;
  EXPECT_LT(rms, 1e-4) << out;
}

// A load the card could not sustain is left out of a fit (its latencies grew
// with the run's length), and the fit says how many it left out.
TEST(CliCalibrate, ALedgerFitLeavesOutLoadsThatWereNotSustainable) {
  auto [out, rms] = FitAtTheRunsOwnFactors("overload", "--rate 4,400 --repeat 1");
  EXPECT_NE(out.find("1 points, 1 not sustainable left out"), std::string::npos) << out;
  EXPECT_EQ(out.find("load 400/s:"), std::string::npos) << out;
  EXPECT_LT(rms, 1e-4) << out;
}

// A ledger run recorded on a simulated card whose effective bandwidth is 60%
// of the H100's datasheet figure and whose steps cost 2 ms: fitting the H100
// simulator to that run recovers both.
TEST(CliCalibrate, LedgerFitRecoversTheCardThatMadeTheRun) {
  const std::string truth = TempPath("truth-cal.json");
  std::ofstream(truth) << R"({"goodput_calibration": 1, "source": "test", "model": "llama-3.1-8b",
    "hardware": {"name": "h100-sxm", "memory_bytes": 85899345920, "usable_memory_gib": 79.18,
                 "kernel_latency_s": 3e-6},
    "factors": {"peak_flops": 989.4e12, "bandwidth": 3.35e12, "compute_efficiency": 0.6,
                "bandwidth_efficiency": 0.6, "step_overhead_s": 0.002, "per_sequence_s": 0, "overlap": 0.5}})";
  const std::string db = TempPath("fit.db");
  std::remove(db.c_str());
  auto rec = RunGoodput("sweep --target sim:" + truth + " --model llama-3.1-8b --workload " + kData +
                        "/workloads/chat.yaml --requests 200 --concurrency 4,32 --repeat 1 --ledger " + db +
                        " --serve-args '--max-model-len 32k'");
  ASSERT_EQ(rec.exit_code, 0) << rec.err;
  const std::string out = TempPath("fitted.json");
  // The card that made the run has no front end: the factors not fitted start from none's, not vLLM's.
  auto fit =
      RunGoodput("calibrate ledger 1 --ledger " + db +
                 " --model llama-3.1-8b --gpu h100 --engine none --max-model-len 32k --max-evaluations 600 -o " + out);
  ASSERT_EQ(fit.exit_code, 0) << fit.err;
  EXPECT_NE(fit.out.find("load 32: TPOT p50"), std::string::npos) << fit.out;
  auto doc = boost::json::parse(ReadFile(out));
  const auto& f = doc.at("factors");
  EXPECT_NEAR(f.at("bandwidth_efficiency").to_number<double>(), 0.6, 0.06) << fit.out;
  // With the card's kernels counted (325 x 3 us in both the truth and the fit)
  // the two loads trade step overhead against bandwidth more: 1.4 ms found.
  EXPECT_NEAR(f.at("step_overhead_s").to_number<double>(), 0.002, 0.001) << fit.out;
  EXPECT_LT(doc.at("fit").at("rms_log_error").to_number<double>(), 0.05) << fit.out;
  // Two loads barely tell four factors apart: 600 evaluations do not settle
  // (from the H100 entry's 0.84, 400 stopped at 0.55 and 1.2 ms with an rms
  // error of 0.009), and the fit says so.
  EXPECT_NE(fit.out.find("stopped at its evaluation budget"), std::string::npos) << fit.out;
}

// A card outside the catalog by its figures: the L40S's own figures give the
// L40S's result (its entry keeps the default efficiencies; the H100's carries
// a fitted one); half its bandwidth gives less throughput.
TEST(CliSimHardware, ACardByItsFigures) {
  const std::string base = "sim --model llama-3.1-8b --max-model-len 32k --workload " + kData +
                           "/workloads/chat.yaml --requests 200 --concurrency 32 --repeat 1 --json ";
  auto l40s = RunGoodput(base + "--gpu l40s");
  auto same = RunGoodput(base + "--gpu-memory 48GB --gpu-bandwidth 864GB/s --gpu-flops 362.05TFLOPS");
  auto slow = RunGoodput(base + "--gpu-memory 48GB --gpu-bandwidth 432GB/s --gpu-flops 362.05TFLOPS");
  ASSERT_EQ(l40s.exit_code, 0) << l40s.err;
  ASSERT_EQ(same.exit_code, 0) << same.err;
  ASSERT_EQ(slow.exit_code, 0) << slow.err;
  EXPECT_NEAR(Throughput(same.out) / Throughput(l40s.out), 1.0, 0.01);
  EXPECT_LT(Throughput(slow.out), 0.8 * Throughput(same.out));
  testing::ExpectEachFails({
                               {"--gpu-memory 80GiB", "needs --gpu-bandwidth and --gpu-flops"},
                               {"--gpu h100 --gpu-bandwidth 2TB/s", "describe a card given by --gpu-memory"},
                               {"--gpu-memory 80GiB --gpu-bandwidth fast --gpu-flops 1P", "--gpu-bandwidth"},
                               {"--gpu-memory 80GiB --gpu-bandwidth 2TB/s --gpu-flops 1PW", "--gpu-flops"},
                           },
                           base);
}

// Qwen3-30B-A3B on 4 H100s: expert parallelism with a busiest GPU 1.5x its
// share is slower than with an even spread.
TEST(CliSimHardware, ExpertParallelRoutingImbalance) {
  const std::string base = "sim --model qwen3-30b-a3b --gpu h100 --tp 4 --max-model-len 32k --workload " + kData +
                           "/workloads/chat.yaml --requests 200 --concurrency 64 --repeat 1 --json "
                           "--enable-expert-parallel ";
  auto even = RunGoodput(base + "--routing-imbalance 1");
  auto skewed = RunGoodput(base + "--routing-imbalance 1.5");
  ASSERT_EQ(even.exit_code, 0) << even.err;
  ASSERT_EQ(skewed.exit_code, 0) << skewed.err;
  EXPECT_LT(Throughput(skewed.out), Throughput(even.out));
  auto bad = RunGoodput(base + "--routing-imbalance 0.5");
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_NE(bad.err.find("--routing-imbalance must be at least 1"), std::string::npos) << bad.err;
}

}  // namespace
}  // namespace goodput
