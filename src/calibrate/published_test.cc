#include "calibrate/published.h"

#include <cmath>
#include <filesystem>

#include <gtest/gtest.h>

#include "core/data_dir.h"
#include "hw/hardware.h"
#include "measure/point.h"
#include "sim/setup.h"
#include "sim/simulator.h"
#include "support/temp_file.h"

namespace goodput {
namespace {

TEST(PublishedFigures, ReadsPointsAndFindsTheirWorkloads) {
  // One workload beside the file, one from data/workloads/.
  const std::string mine = testing::WriteTempFile("mine.yaml", R"(name: mine
requests: 10
classes:
  - name: chat
    prompt: fixed:100
    output: fixed:10
)");
  const std::string text = "source: a vendor page\npoints:\n  - workload: " +
                           std::filesystem::path(mine).filename().string() +
                           "\n    rate: 2.5\n    ttft_p50_s: 0.2\n"
                           "  - workload: random-4000-200-burst.yaml\n    ttft_p50_s: 61.95\n    tpot_p50_s: 0.17737\n"
                           "    throughput_tokens_per_s: 753.67\n";
  auto f = ParsePublishedFigures(text, "figures.yaml", std::filesystem::path(mine).parent_path().string());
  ASSERT_TRUE(f.ok()) << f.status().message();
  EXPECT_EQ(f->source, "a vendor page");
  ASSERT_EQ(f->loads.size(), 2u);
  EXPECT_EQ(f->loads[0].workload.name, "mine");
  EXPECT_EQ(f->loads[0].load.kind, ArrivalKind::kPoisson);
  EXPECT_DOUBLE_EQ(f->loads[0].load.rate, 2.5);
  EXPECT_DOUBLE_EQ(f->loads[0].ttft_p50, 0.2);
  EXPECT_EQ(f->loads[0].tpot_p50, 0);  // not published: not fitted
  EXPECT_EQ(f->loads[1].load.kind, ArrivalKind::kBatch);  // the workload's own arrival
  EXPECT_EQ(f->loads[1].workload.requests, 500);
  EXPECT_DOUBLE_EQ(f->loads[1].throughput, 753.67);
  EXPECT_EQ(f->loads[1].label, "random-4000-200-burst at load batch");
}

TEST(PublishedFigures, BrokenFilesNameTheProblem) {
  const auto err = [](const std::string& text) {
    auto f = ParsePublishedFigures(text, "figures.yaml", ".");
    return f.ok() ? std::string("parsed") : f.status().message();
  };
  const std::string wl = "  - workload: random-4000-200-burst.yaml\n";
  EXPECT_NE(err("points: [").find("figures.yaml:1: not valid YAML"), std::string::npos);
  EXPECT_NE(err("source: x\n").find("'points' must list"), std::string::npos);
  EXPECT_NE(err("points:\n  - ttft_p50_s: 1\n").find("figures.yaml:2: a point needs 'workload'"), std::string::npos);
  EXPECT_NE(err("points:\n" + wl).find("needs at least one of ttft_p50_s"), std::string::npos);
  EXPECT_NE(err("points:\n" + wl + "    ttft_p50_s: -3\n").find("'ttft_p50_s' must be a positive number"),
            std::string::npos);
  EXPECT_NE(err("points:\n" + wl + "    tpot_p50_s: fast\n").find("figures.yaml:3: 'tpot_p50_s'"), std::string::npos);
  // Past any serving measurement: a typo a fit would otherwise chase (1e300 s a token once wrote a calibration).
  EXPECT_NE(
      err("points:\n" + wl + "    tpot_p50_s: 1e300\n").find("'tpot_p50_s' must be a positive number, at most 3600"),
      std::string::npos);
  EXPECT_NE(err("points:\n" + wl + "    ttft_p50_s: 90000\n").find("at most 86400"), std::string::npos);
  EXPECT_NE(err("points:\n" + wl + "    throughput_tokens_per_s: 2e9\n").find("at most 1e+09"), std::string::npos);
  EXPECT_NE(
      err("points:\n" + wl + "    ttft_p50_s: 3\n    rate: 1e300\n").find("--rate: 1e+300 requests/s; 0.0001 to 1e+06"),
      std::string::npos);
  EXPECT_NE(err("points:\n" + wl + "    ttft: 3\n").find("unknown key 'ttft'"), std::string::npos);
  EXPECT_NE(err("points:\n" + wl + "    ? [a, b]\n    : 3\n").find("unknown key ''"), std::string::npos);
  EXPECT_NE(err("points:\n" + wl + "    ttft_p50_s: 3\n    concurrency: 4\n    rate: 2\n").find("not both"),
            std::string::npos);
  EXPECT_NE(err("points:\n" + wl + "    ttft_p50_s: 3\n    concurrency: 2,4\n").find("one load"), std::string::npos);
  EXPECT_NE(err("points:\n  - workload: no-such.yaml\n    ttft_p50_s: 3\n").find("cannot read workload"),
            std::string::npos);
  EXPECT_FALSE(LoadPublishedFigures("/nonexistent/figures.yaml").ok());
}

// Figures the simulator itself made with known factors, fitted from the
// catalog's: the fit must give them back.
TEST(PublishedFigures, AFitGivesBackFiguresMadeWithKnownFactors) {
  PlanOptions o;
  o.engine.scheduler.max_model_len = 4096;
  auto setup = SetupCatalogSimulation("llama-3.1-8b", "h100", o);
  ASSERT_TRUE(setup.ok()) << setup.status().message();
  CostFactors truth = setup->cost->factors();
  truth.compute_efficiency = 0.35;
  truth.bandwidth_efficiency = 0.7;
  truth.step_overhead_s = 0.003;
  const CostModel cost(setup->cost->model(), truth);
  auto workload = LoadWorkload(DataDir() + "/workloads/random-1024-128.yaml");
  ASSERT_TRUE(workload.ok());
  workload->requests = 48;
  std::vector<MeasuredLoad> loads;
  for (int c : {1, 16}) {
    const ArrivalSpec load{ArrivalKind::kClosedLoop, c, 1, 1};
    auto run = Simulate(*workload, load, setup->options, cost);
    ASSERT_TRUE(run.ok());
    MeasuredRun m;
    m.window = MeasurementWindow(*workload, run->records);
    m.records = std::move(run->records);
    const PointResult p = Summarise(*workload, load, {m});
    loads.push_back(MeasuredLoad{*workload, load, "c" + std::to_string(c), p.ttft.p50, p.tpot.p50, p.throughput});
  }
  LedgerFitOptions options;
  options.max_evaluations = 250;
  auto fit = FitMeasuredLoads(loads, *setup, FindGpu("h100").value(), "test", options);
  ASSERT_TRUE(fit.ok()) << fit.status().message();
  ASSERT_EQ(fit->residuals.size(), 6u);
  for (const FitResidual& r : fit->residuals) EXPECT_NEAR(r.modeled / r.measured, 1.0, 0.05) << r.what;
  EXPECT_EQ(fit->source, "test");
  EXPECT_FALSE(FitMeasuredLoads({}, *setup, FindGpu("h100").value(), "none").ok());
}

// The front end's latency moves the first token and nothing of the steps, so
// a TTFT and a TPOT tell it and the bandwidth efficiency apart: the fit finds
// both from figures simulated with them.
TEST(PublishedFigures, AFitFindsTheFrontEndsLatency) {
  auto setup = SetupCatalogSimulation("llama-3.1-8b", "h100", PlanOptions{});
  ASSERT_TRUE(setup.ok()) << setup.status().message();
  CostFactors truth = setup->cost->factors();
  truth.bandwidth_efficiency = 0.7;
  truth.frontend_latency_s = 0.04;
  auto workload = ParseWorkload(
      "requests: 20\nclasses:\n  - name: chat\n    prompt: fixed:200\n    output: fixed:100\n", "w.yaml", ".");
  ASSERT_TRUE(workload.ok());
  const ArrivalSpec load{ArrivalKind::kClosedLoop, 1, 1, 1};
  auto run = Simulate(*workload, load, setup->options, CostModel(setup->cost->model(), truth));
  ASSERT_TRUE(run.ok());
  MeasuredRun m;
  m.window = MeasurementWindow(*workload, run->records);
  m.records = std::move(run->records);
  const PointResult p = Summarise(*workload, load, {m});
  LedgerFitOptions options;
  options.factors = {"bandwidth-efficiency", "frontend-latency"};
  const std::vector<MeasuredLoad> loads = {MeasuredLoad{*workload, load, "c1", p.ttft.p50, p.tpot.p50, 0}};
  auto fit = FitMeasuredLoads(loads, *setup, FindGpu("h100").value(), "test", options);
  ASSERT_TRUE(fit.ok()) << fit.status().message();
  EXPECT_NEAR(fit->factors.bandwidth_efficiency / 0.7, 1, 0.01);
  EXPECT_NEAR(fit->factors.frontend_latency_s / 0.04, 1, 0.02);
  options.factors = {"frontend-cost"};
  const auto unknown = FitMeasuredLoads(loads, *setup, FindGpu("h100").value(), "test", options);
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("unknown factor 'frontend-cost' to fit (compute-efficiency, "),
            std::string::npos)
      << unknown.status().message();
}

}  // namespace
}  // namespace goodput
