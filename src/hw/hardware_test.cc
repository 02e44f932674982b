#include "hw/hardware.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include "hw/cost_model.h"
#include "support/temp_file.h"

namespace goodput {
namespace {

TEST(Hardware, CatalogHoldsTheIssueGpus) {
  auto all = LoadHardwareCatalog();
  ASSERT_TRUE(all.ok()) << all.status().message();
  for (const char* name : {"a100-80gb", "h100-sxm", "h200", "b200", "l40s", "mi300x", "h100-pcie", "h100-nvl", "gh200",
                           "mi325x", "rtx-4090", "a10g"}) {
    EXPECT_TRUE(FindGpu(name).ok()) << name;
  }
}

// Dense figures, not the "with sparsity" ones: H100 SXM BF16 is ~989 TFLOP/s.
TEST(Hardware, DenseNotSparseFlops) {
  auto h100 = FindGpu("H100");
  ASSERT_TRUE(h100.ok());
  EXPECT_NEAR(*h100->bf16_flops / 1e12, 989.4, 0.1);
  EXPECT_NEAR(*h100->fp8_flops / *h100->bf16_flops, 2.0, 0.01);
  EXPECT_FALSE(h100->fp4_flops.has_value());
  EXPECT_NEAR(h100->memory_bandwidth, 3.35e12, 1e9);
  EXPECT_EQ(h100->TotalMemoryBytes(), 85018877624);  // 79.18 GiB
  auto b200 = FindGpu("b200");
  ASSERT_TRUE(b200.ok());
  EXPECT_NEAR(*b200->fp4_flops / *b200->fp8_flops, 2.0, 0.01);
  // As the CUDA driver reports it: 178.35 GiB, and a 7,680-bit bus at 3,996 MHz (double data rate).
  EXPECT_FALSE(b200->total_is_nominal());
  EXPECT_NEAR(static_cast<double>(b200->TotalMemoryBytes()), 178.35 * (1 << 30), 1e6);
  EXPECT_NEAR(b200->memory_bandwidth, 7680.0 / 8 * 3996e6 * 2, 1e9);
}

// The A10G: the A10's memory (24 GB at 600 GB/s), less tensor throughput
// (80 SMs x 1.71 GHz x 512 FLOP per SM-clock = 70 TFLOP/s), no FP8 cores, and
// the 23,028 MiB nvidia-smi reports on G5 instances as its usable total.
TEST(Hardware, A10gIsAnAmpereCardWithoutFp8) {
  auto a10g = FindGpu("A10G");
  ASSERT_TRUE(a10g.ok()) << a10g.status().message();
  EXPECT_NEAR(*a10g->bf16_flops / 1e12, 80 * 1.71 * 512 / 1e3, 0.1);
  EXPECT_NEAR(a10g->memory_bandwidth, 600e9, 1e6);
  EXPECT_FALSE(a10g->fp8_flops.has_value());
  EXPECT_NEAR(static_cast<double>(a10g->TotalMemoryBytes()), 23028.0 * (1 << 20), 0.01 * (1 << 30));
  EXPECT_TRUE(WeightOnlyWarning(*a10g, "fp8").has_value());
}

TEST(Hardware, RidgePointOfTheSourceDocument) {
  // Seed 000: the H100 SXM BF16 ridge is about 295 FLOP/byte.
  auto h100 = FindGpu("h100-sxm");
  ASSERT_TRUE(h100.ok());
  EXPECT_NEAR(*h100->bf16_flops / h100->memory_bandwidth, 295, 1);
}

// A catalog of one card in a scratch data directory.
Result<HardwareSpec> LoadOneCard(const std::string& extra,
                                 const std::string& defaults = R"("defaults": {"kernel_latency_s": 3e-6}, )") {
  const std::string dir = testing::TempPath("data");
  std::filesystem::create_directories(dir + "/hardware");
  testing::WriteTempFile(
      "data/hardware/gpus.json",
      "{" + defaults + R"("gpus": [{"name": "x1", "memory_bytes": 8e10, "memory_bandwidth": 3e12, "bf16_flops": 1e15)" +
          extra + "}]}");
  const char* before = std::getenv("GOODPUT_DATA_DIR");
  const std::string saved = before ? before : "";
  setenv("GOODPUT_DATA_DIR", dir.c_str(), 1);
  auto card = FindGpu("x1");
  setenv("GOODPUT_DATA_DIR", saved.c_str(), 1);  // empty: the default lookup
  return card;
}

// A card takes the catalog's kernel latency unless its entry states one; the
// catalog must state the default, and neither may be negative.
// The roofline's overlap of compute and memory: the catalog's default (0.5,
// from DeepGEMM's published GEMM timings), an entry's own, 1 (the plain
// roofline) where the catalog names none; outside [0, 1] is an error.
TEST(Hardware, OverlapFromTheCatalogsDefaultsOrTheEntry) {
  EXPECT_DOUBLE_EQ(FindGpu("h100-sxm")->overlap, 0.5);
  EXPECT_DOUBLE_EQ(LoadOneCard("")->overlap, 1.0);
  EXPECT_DOUBLE_EQ(LoadOneCard("", R"("defaults": {"kernel_latency_s": 3e-6, "overlap": 0.3}, )")->overlap, 0.3);
  EXPECT_DOUBLE_EQ(
      LoadOneCard(R"(, "overlap": 0.8)", R"("defaults": {"kernel_latency_s": 3e-6, "overlap": 0.3}, )")->overlap, 0.8);
  auto bad = LoadOneCard(R"(, "overlap": 1.5)");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("overlap must be in [0, 1]"), std::string::npos);
  EXPECT_FALSE(LoadOneCard("", R"("defaults": {"kernel_latency_s": 3e-6, "overlap": -1}, )").ok());
  EXPECT_DOUBLE_EQ(LoadCatalogDefaults()->overlap, 0.5);
}

TEST(Hardware, KernelLatencyFromTheDefaultsOrTheEntry) {
  auto card = LoadOneCard("");
  ASSERT_TRUE(card.ok()) << card.status().message();
  EXPECT_DOUBLE_EQ(card->kernel_latency_s, 3e-6);
  card = LoadOneCard(R"(, "kernel_latency_s": 5e-6)");
  ASSERT_TRUE(card.ok()) << card.status().message();
  EXPECT_DOUBLE_EQ(card->kernel_latency_s, 5e-6);
  card = LoadOneCard(R"(, "kernel_latency_s": -1e-6)");
  ASSERT_FALSE(card.ok());
  EXPECT_NE(card.status().message().find("kernel latency"), std::string::npos) << card.status().message();
  card = LoadOneCard("", "");
  ASSERT_FALSE(card.ok());
  EXPECT_NE(card.status().message().find("defaults"), std::string::npos) << card.status().message();
  card = LoadOneCard("", R"("defaults": {"kernel_latency_s": "fast"}, )");
  ASSERT_FALSE(card.ok());
  EXPECT_NE(card.status().message().find("kernel_latency_s"), std::string::npos) << card.status().message();
}

TEST(Hardware, EfficiencyByPrecision) {
  auto card = LoadOneCard(R"(, "compute_efficiency": 0.5, "compute_efficiency_by_precision": {"mxfp4": 0.25})");
  ASSERT_TRUE(card.ok()) << card.status().message();
  EXPECT_DOUBLE_EQ(card->ComputeEfficiencyFor("mxfp4"), 0.25);
  EXPECT_DOUBLE_EQ(card->ComputeEfficiencyFor("bf16"), 0.5);
  EXPECT_DOUBLE_EQ(card->ComputeEfficiencyFor("fp8"), 0.5);
  EXPECT_DOUBLE_EQ(card->ExpertEfficiencyFor("fp8"), 0);  // none given: the experts run as the dense matmuls
  card = LoadOneCard(R"(, "expert_efficiency_by_precision": {"fp8": 0.1})");
  ASSERT_TRUE(card.ok()) << card.status().message();
  EXPECT_DOUBLE_EQ(card->ExpertEfficiencyFor("fp8"), 0.1);
  EXPECT_DOUBLE_EQ(card->ExpertEfficiencyFor("bf16"), 0);
  EXPECT_DOUBLE_EQ(card->ComputeEfficiencyFor("fp8"), 0.6);
}

TEST(Hardware, BadEfficiencyByPrecisionIsRefused) {
  for (const char* bad : {R"(, "compute_efficiency_by_precision": {"mxfp4": 1.5})",
                          R"(, "compute_efficiency_by_precision": {"mxfp4": "fast"})",
                          R"(, "compute_efficiency_by_precision": [0.3])"}) {
    auto card = LoadOneCard(bad);
    ASSERT_FALSE(card.ok()) << bad;
    EXPECT_NE(card.status().message().find("compute_efficiency_by_precision"), std::string::npos)
        << card.status().message();
  }
  for (const char* bad :
       {R"(, "expert_efficiency_by_precision": {"fp8": 0})", R"(, "expert_efficiency_by_precision": {"fp8": null})",
        R"(, "expert_efficiency_by_precision": "fp8")"}) {
    auto card = LoadOneCard(bad);
    ASSERT_FALSE(card.ok()) << bad;
    EXPECT_NE(card.status().message().find("expert_efficiency_by_precision"), std::string::npos)
        << card.status().message();
  }
}

// A step's fixed cost is the engine's (data/hardware/engines.json): a card that
// sets one is refused rather than overridden without a word.
TEST(Hardware, AStepOverheadOnACardIsRefused) {
  auto card = LoadOneCard(R"(, "step_overhead_s": 0.002)");
  ASSERT_FALSE(card.ok());
  EXPECT_NE(card.status().message().find("engines.json"), std::string::npos) << card.status().message();
}

TEST(Hardware, ArchIsReadAndABadOneRefused) {
  auto card = LoadOneCard(R"(, "arch": "sm90")");
  ASSERT_TRUE(card.ok()) << card.status().message();
  EXPECT_EQ(card->arch, "sm90");
  EXPECT_EQ(LoadOneCard("")->arch, "");
  for (const char* bad :
       {R"(, "arch": 90)", R"(, "arch": "hopper")", R"(, "arch": "sm9x")", R"(, "arch": "sm1234567")"}) {
    auto bad_card = LoadOneCard(bad);
    ASSERT_FALSE(bad_card.ok()) << bad;
    EXPECT_NE(bad_card.status().message().find("arch must be"), std::string::npos) << bad_card.status().message();
  }
  EXPECT_EQ(FindGpu("a100-80gb")->arch, "sm80");
  EXPECT_EQ(FindGpu("h100-sxm")->arch, "sm90");
}

TEST(Hardware, AttentionEfficiencyByPrecision) {
  auto card = LoadOneCard(R"(, "compute_efficiency": 0.5, "attention_efficiency_by_precision": {"mxfp4": 0.2})");
  ASSERT_TRUE(card.ok()) << card.status().message();
  EXPECT_DOUBLE_EQ(card->AttentionEfficiencyFor("mxfp4"), 0.2);
  EXPECT_DOUBLE_EQ(card->AttentionEfficiencyFor("bf16"), 0.5);
  EXPECT_DOUBLE_EQ(card->ComputeEfficiencyFor("mxfp4"), 0.5);  // the matmuls keep theirs
  for (const char* bad : {R"(, "attention_efficiency_by_precision": {"mxfp4": 0})",
                          R"(, "attention_efficiency_by_precision": {"mxfp4": 1.2})",
                          R"(, "attention_efficiency_by_precision": 0.3)"}) {
    auto bad_card = LoadOneCard(bad);
    ASSERT_FALSE(bad_card.ok()) << bad;
    EXPECT_NE(bad_card.status().message().find("attention_efficiency_by_precision"), std::string::npos)
        << bad_card.status().message();
  }
}

TEST(Hardware, UnknownGpuListsTheKnownOnes) {
  auto g = FindGpu("rtx-9090");
  ASSERT_FALSE(g.ok());
  EXPECT_NE(g.status().message().find("h100-sxm"), std::string::npos);
  EXPECT_NE(g.status().message().find("--gpu-memory"), std::string::npos);
}

}  // namespace
}  // namespace goodput
