#include "calibrate/calibration.h"

#include <cmath>
#include <map>
#include <sstream>
#include <utility>

#include <gtest/gtest.h>

#include "support/temp_file.h"

#include "calibrate/engine_calibration.h"
#include "engine/step_log.h"
#include "sim/setup.h"
#include "hw/hardware.h"
#include "model/catalog.h"
#include "model/params.h"

namespace goodput {
namespace {

Calibration Example() {
  Calibration c;
  c.source = "test";
  c.model = "goodput-small";
  c.weight_precision = "fp32";
  c.hardware.name = "cpu";
  c.hardware.cpu = true;
  c.hardware.memory_bytes = int64_t{24} << 30;
  c.factors.peak_flops = 2e11;
  c.factors.bandwidth = 4e10;
  c.factors.bandwidth_efficiency = 1;
  c.factors.efficiency_curve = {{1, 0.05}, {64, 0.8}, {1024, 1.0}};
  c.factors.attention_curve = {{1, 0.02}, {256, 0.1}};
  c.factors.compute_efficiency = 1.0;
  c.factors.step_overhead_s = 3e-4;
  c.factors.per_sequence_s = 2e-5;
  c.factors.overlap = 0.6;
  c.factors.frontend_latency_s = 0.05;
  c.residuals = {{"decode 1 x ctx 64", 0.009, 0.0091}};
  c.rms_log_error = 0.01;
  return c;
}

TEST(Calibration, JsonRoundTrip) {
  const Calibration c = Example();
  auto back = ParseCalibration(CalibrationToJson(c), "test.json");
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_TRUE(back->hardware.cpu);
  EXPECT_EQ(back->hardware.memory_bytes, c.hardware.memory_bytes);
  EXPECT_DOUBLE_EQ(back->factors.peak_flops, 2e11);
  EXPECT_DOUBLE_EQ(back->factors.overlap, 0.6);
  EXPECT_DOUBLE_EQ(back->factors.frontend_latency_s, 0.05);
  EXPECT_FALSE(back->factors.async_scheduling);
  EXPECT_EQ(back->factors.expert_efficiency, 0);
  Calibration moe = Example();
  moe.factors.expert_efficiency = 0.1;  // a card's FP8 MoE kernel (FactorsFor) carried into the file
  EXPECT_DOUBLE_EQ(ParseCalibration(CalibrationToJson(moe), "moe.json")->factors.expert_efficiency, 0.1);
  Calibration async = Example();
  async.factors.async_scheduling = true;  // an engine's (calibrate --engine trtllm) carried into the file
  EXPECT_TRUE(ParseCalibration(CalibrationToJson(async), "async.json")->factors.async_scheduling);
  EXPECT_EQ(back->factors.eager_kernel_s, 0);
  Calibration eager = Example();
  eager.factors.eager_kernel_s = 4.43e-5;  // an engine's eager prompt steps (calibrate --engine sglang)
  EXPECT_DOUBLE_EQ(ParseCalibration(CalibrationToJson(eager), "eager.json")->factors.eager_kernel_s, 4.43e-5);
  EXPECT_EQ(back->factors.graph_max_batch, 0);
  eager.factors.graph_max_batch = 512;  // and its decode steps' graphs (calibrate --engine sglang on eight H200)
  EXPECT_EQ(ParseCalibration(CalibrationToJson(eager), "eager.json")->factors.graph_max_batch, 512);
  EXPECT_EQ(back->weight_precision, "fp32");
  ASSERT_EQ(back->factors.efficiency_curve.size(), 3u);
  EXPECT_DOUBLE_EQ(back->factors.efficiency_curve[1].second, 0.8);
  ASSERT_EQ(back->factors.attention_curve.size(), 2u);
  EXPECT_DOUBLE_EQ(back->factors.attention_curve[1].second, 0.1);
  EXPECT_EQ(back->hardware.arch, "");  // the CPU has none
  EXPECT_FALSE(back->hardware.usable_memory_gib.has_value());
  Calibration gpu = Example();
  gpu.hardware = FindGpu("a100-80gb").value();
  auto card = ParseCalibration(CalibrationToJson(gpu), "gpu.json");
  ASSERT_TRUE(card.ok()) << card.status().message();
  EXPECT_EQ(card->hardware.arch, "sm80");
  EXPECT_EQ(card->hardware.TotalMemoryBytes(), gpu.hardware.TotalMemoryBytes());  // the usable total, not nominal
  ASSERT_EQ(back->residuals.size(), 0u);  // residuals are for people; the simulator needs the factors
  EXPECT_NE(CalibrationToJson(c).find("\n  \"factors\": {\n"), std::string::npos);  // one field per line
}

TEST(Calibration, BrokenFilesNameTheProblem) {
  const auto err = [](const std::string& text) { return ParseCalibration(text, "cal.json").status().message(); };
  EXPECT_NE(err("[]").find("cal.json: not a JSON object"), std::string::npos);
  EXPECT_NE(err("{}").find("'goodput_calibration' is required"), std::string::npos);
  EXPECT_NE(err(R"({"goodput_calibration": 9, "hardware": {}, "factors": {}})").find("version 9"), std::string::npos);
  std::string text = CalibrationToJson(Example());
  text.replace(text.find("\"overlap\": 0.6"), 14, "\"overlap\": 1.6");
  EXPECT_NE(err(text).find("overlap must be in [0, 1]"), std::string::npos);
  text = CalibrationToJson(Example());
  text.replace(text.find("\"frontend_latency_s\": 0.05"), 25, "\"frontend_latency_s\": -0.05");
  EXPECT_NE(
      err(text).find(
          "the front end's, kernels' and all-reduces' latencies, eager launches and the CUDA graphs' largest batch"),
      std::string::npos)
      << text;
  text = CalibrationToJson(Example());
  text.replace(text.find(",\n    \"frontend_latency_s\": 0.05"), 31, "");
  auto before_front_end = ParseCalibration(text, "old.json");  // written before the front end was kept
  ASSERT_TRUE(before_front_end.ok()) << text;
  EXPECT_EQ(before_front_end->factors.frontend_latency_s, 0);
  text = CalibrationToJson(Example());
  text.replace(text.find(",\n    \"eager_kernel_s\": 0"), 24, "");
  auto before_eager = ParseCalibration(text, "old.json");  // written before eager prompt steps were kept
  ASSERT_TRUE(before_eager.ok()) << text;
  EXPECT_EQ(before_eager->factors.eager_kernel_s, 0);
  EXPECT_EQ(text.find("eager_kernel_s"), std::string::npos) << text;
  text = CalibrationToJson(Example());
  text.replace(text.find("\"graph_max_batch\": 0"), 20, "\"graph_max_batch\": -4");
  EXPECT_NE(err(text).find("the CUDA graphs' largest batch must be >= 0"), std::string::npos) << text;
  text = CalibrationToJson(Example());
  text.replace(text.find("\"expert_efficiency\": 0"), 22, "\"expert_efficiency\": 1.5");
  EXPECT_NE(err(text).find("expert_efficiency must be in [0, 1]"), std::string::npos) << text;
  text = CalibrationToJson(Example());
  text.replace(text.find("\"head_rate\": 1"), 14, "\"head_rate\": 0");
  EXPECT_NE(err(text).find("head_rate must be positive"), std::string::npos) << text;
  text = CalibrationToJson(Example());
  text.replace(text.find(",\n    \"head_rate\": 1"), 20, "");
  auto before_head = ParseCalibration(text, "old.json");  // written before the head kept its own rate
  ASSERT_TRUE(before_head.ok()) << text;
  EXPECT_EQ(before_head->factors.head_rate, 1);
  text = CalibrationToJson(Example());
  text.replace(text.find("\"async_scheduling\": false"), 25, "\"async_scheduling\": 1");
  EXPECT_NE(err(text).find("'async_scheduling' must be true or false"), std::string::npos) << text;
  text = CalibrationToJson(Example());
  text.replace(text.find("\"bandwidth\": 4e+10"), 18, "\"bandwidth\": \"x\"");
  EXPECT_NE(err(text).find("'bandwidth' must be a number"), std::string::npos);
  text = CalibrationToJson(Example());
  text.replace(text.find("\"arch\": \"\""), 10, "\"arch\": \"sm9x\"");
  EXPECT_NE(err(text).find("hardware arch must look like"), std::string::npos) << text;
  text = CalibrationToJson(Example());
  text.replace(text.find("\"usable_memory_gib\": null"), 25, "\"usable_memory_gib\": -4");
  EXPECT_NE(err(text).find("usable_memory_gib must be a positive number"), std::string::npos) << text;
  // Fields of the wrong type were read as absent before.
  text = CalibrationToJson(Example());
  text.replace(text.find("\"efficiency_curve\": ["), 21, "\"efficiency_curve\": \"fast\", \"x\": [");
  EXPECT_NE(err(text).find("efficiency_curve must be a list of [tokens, efficiency]"), std::string::npos) << text;
  text = CalibrationToJson(Example());
  text.replace(text.find("\"model\": \""), 10, "\"model\": 7, \"y\": \"");
  EXPECT_NE(err(text).find("'model' must be a string"), std::string::npos) << text;
}

// A logged step of one request: `num_new` tokens after `num_computed`.
StepPlan OneRequestStep(int64_t num_computed, int64_t num_new) {
  StepPlan plan;
  plan.requests.push_back({});
  plan.requests[0].num_computed = num_computed;
  plan.requests[0].num_new = num_new;
  plan.requests[0].samples = true;
  return plan;
}

// The fit of a step log of 2,000 `common` steps with a `rare` one before
// every `every`-th (each with its time), thinned to 100 steps, on
// goodput-small.
Result<Calibration> FitMostlyCommonSteps(const std::string& name, const std::pair<StepPlan, double>& common,
                                         const std::pair<StepPlan, double>& rare, int every) {
  std::ostringstream log;
  WriteStepLogHeader(log);
  const std::vector<RequestEvent> none;
  double t = 0;
  const auto write = [&](const std::pair<StepPlan, double>& step) {
    WriteStepLogLine(log, ObservedStep{step.first, t, t + step.second, none});
    t += step.second;
  };
  for (int i = 0; i < 2000; ++i) {
    write(common);
    if (i % every == 0) write(rare);
  }
  cpu::CpuEngineConfig config;
  config.model = "goodput-small";
  config.load_format = "dummy";
  return CalibrateFromStepLogs(config, {testing::WriteTempFile(name, log.str())}, 100);
}

// A server's log is mostly decodes: thinned to the step budget, every one of
// the rare long prefills is still fitted (an even spread kept none of them).
TEST(CalibrateFromStepLogs, KeepsEveryStepOfARareShape) {
  auto cal = FitMostlyCommonSteps("rare.log", {OneRequestStep(100, 1), 0.02}, {OneRequestStep(0, 1000), 2.0}, 500);
  ASSERT_TRUE(cal.ok()) << cal.status().message();
  EXPECT_LE(cal->measurements, 100);
  bool prefills = false;
  for (const FitResidual& r : cal->residuals) {
    if (r.what.rfind("prefill", 0) == 0) {
      prefills = true;
      EXPECT_NE(r.what.find("(4 steps)"), std::string::npos) << r.what;
      EXPECT_NEAR(r.measured, 2.0, 1e-9);
    }
  }
  EXPECT_TRUE(prefills);
}

// Decodes at long contexts are their own shape: a log of 2,000 short decodes
// and 20 at 2,000 tokens keeps all 20 long ones (one shape per batch size
// sampled ~1 of them), and the residuals show the two apart.
TEST(CalibrateFromStepLogs, TellsDecodesApartByContext) {
  auto cal = FitMostlyCommonSteps("contexts.log", {OneRequestStep(100, 1), 0.02}, {OneRequestStep(2000, 1), 0.04}, 100);
  ASSERT_TRUE(cal.ok()) << cal.status().message();
  std::map<std::string, double> measured;
  for (const FitResidual& r : cal->residuals) measured[r.what] = r.measured;
  EXPECT_NEAR(measured["decode 1 requests at 1K-4K context (20 steps)"], 0.04, 1e-9);
  int short_rows = 0;
  for (const auto& [what, seconds] : measured) {
    if (what.rfind("decode 1 requests at <256 context", 0) != 0) continue;
    ++short_rows;
    EXPECT_NEAR(seconds, 0.02, 1e-9);
  }
  EXPECT_EQ(short_rows, 1);
}

// The residual rows cover every logged step, not only the fitted sample:
// decodes alternating 20 and 30 ms, thinned to every 20th (the 20 ms ones
// only), show their mean over all 2,000, 25 ms, against a model fitted to
// the 20 ms ones.
TEST(CalibrateFromStepLogs, ShowsResidualsOverEveryLoggedStep) {
  std::ostringstream log;
  WriteStepLogHeader(log);
  const std::vector<RequestEvent> none;
  const StepPlan decode = OneRequestStep(100, 1);
  double t = 0;
  for (int i = 0; i < 2000; ++i) {
    const double seconds = i % 2 == 0 ? 0.02 : 0.03;
    WriteStepLogLine(log, ObservedStep{decode, t, t + seconds, none});
    t += seconds;
  }
  cpu::CpuEngineConfig config;
  config.model = "goodput-small";
  config.load_format = "dummy";
  auto cal = CalibrateFromStepLogs(config, {testing::WriteTempFile("alternating.log", log.str())}, 100);
  ASSERT_TRUE(cal.ok()) << cal.status().message();
  EXPECT_EQ(cal->measurements, 100);
  ASSERT_EQ(cal->residuals.size(), 1u);
  EXPECT_EQ(cal->residuals[0].what, "decode 1 requests at <256 context (2000 steps)");
  EXPECT_NEAR(cal->residuals[0].measured, 0.025, 1e-9);
  EXPECT_NEAR(cal->residuals[0].modeled, 0.02, 0.001) << "fitted to the sample";
}

// The simulator of a calibrated CPU engine has goodput serve's KV pool: the
// same blocks of the same size, the same resolved engine sizes.
TEST(PlanOptionsFor, TheSimulatorGetsServesPool) {
  for (auto [dtype, mib] : {std::pair<const char*, int64_t>{"auto", 512}, {"int8", 64}}) {
    {
      cpu::CpuEngineConfig config;
      config.model = "goodput-small";
      config.load_format = "dummy";
      config.engine.cache.kv_cache_memory = mib << 20;
      config.engine.cache.kv_cache_dtype = dtype;
      config.engine.scheduler.max_model_len = 2048;
      auto engine = cpu::LoadCpuEngine(config);
      ASSERT_TRUE(engine.ok()) << engine.status().message();
      const Calibration cal = Example();
      auto setup = SetupCalibratedSimulation(engine->model, PlanOptionsFor(cal, engine->config), cal);
      ASSERT_TRUE(setup.ok()) << setup.status().message();
      EXPECT_EQ(setup->options.num_blocks, engine->num_blocks) << dtype << " " << mib << " MiB";
      EXPECT_EQ(setup->options.kv_groups.front().block_size, engine->layout.groups.front().block_size);
      EXPECT_EQ(setup->options.scheduler.max_num_seqs, engine->config.scheduler.max_num_seqs);
      EXPECT_EQ(setup->options.scheduler.max_num_batched_tokens, engine->config.scheduler.max_num_batched_tokens);
      EXPECT_EQ(setup->options.scheduler.max_model_len, 2048);
    }
  }
}

// A calibration fitted with BF16 weights on an H100, asked for FP8 weights:
// its factors are carried through the H100's catalog entry (the FP8 peak,
// attention at its rate), not applied at the BF16 peak it kept. A CPU
// calibration has no entry to carry it: an error that says what to do.
TEST(SetupCalibratedSimulation, CarriesFactorsToTheWeightsFormatAsked) {
  Calibration c;
  c.model = "llama-3.1-8b";
  c.weight_precision = "bf16";
  c.hardware = *FindGpu("h100");
  c.factors = *FactorsFor(c.hardware, "bf16");
  c.factors.compute_efficiency = 0.45;
  const ModelSpec llama = *LoadModel("llama-3.1-8b");
  PlanOptions options = PlanOptionsFor(c, EngineConfig{});
  options.engine.scheduler.max_model_len = 8192;
  auto bf16 = SetupCalibratedSimulation(llama, options, c);
  ASSERT_TRUE(bf16.ok()) << bf16.status().message();
  EXPECT_DOUBLE_EQ(bf16->cost->factors().peak_flops, *c.hardware.bf16_flops);
  options.weights = "fp8";
  auto fp8 = SetupCalibratedSimulation(llama, options, c);
  ASSERT_TRUE(fp8.ok()) << fp8.status().message();
  const CostFactors& f = fp8->cost->factors();
  EXPECT_DOUBLE_EQ(f.peak_flops, *c.hardware.fp8_flops);
  EXPECT_DOUBLE_EQ(f.EfficiencyAt(2048), 0.45);
  EXPECT_DOUBLE_EQ(f.peak_flops * f.AttentionEfficiencyAt(2048), 0.45 * *c.hardware.bf16_flops);
  c.weight_precision = "";  // a file written before the format was kept: used as it is
  auto unknown = SetupCalibratedSimulation(llama, options, c);
  ASSERT_TRUE(unknown.ok());
  EXPECT_DOUBLE_EQ(unknown->cost->factors().peak_flops, *c.hardware.bf16_flops);
  Calibration cpu = Example();
  cpu.weight_precision = "bf16";
  cpu::CpuEngineConfig config;
  config.model = "goodput-small";
  config.load_format = "dummy";
  config.engine.cache.kv_cache_memory = int64_t{512} << 20;
  auto engine = cpu::LoadCpuEngine(config);
  ASSERT_TRUE(engine.ok()) << engine.status().message();
  const auto refused = SetupCalibratedSimulation(engine->model, PlanOptionsFor(cpu, engine->config), cpu);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("fitted with bf16 weights on cpu, which has no catalog entry to carry it "
                                            "to fp32 weights: fit one with fp32 weights"),
            std::string::npos)
      << refused.status().message();
}

}  // namespace
}  // namespace goodput
