#include "hw/hardware.h"

#include <gtest/gtest.h>

namespace goodput {
namespace {

TEST(Hardware, CatalogHoldsTheIssueGpus) {
  auto all = LoadHardwareCatalog();
  ASSERT_TRUE(all.ok()) << all.status().message();
  for (const char* name : {"a100-80gb", "h100-sxm", "h200", "b200", "l40s", "mi300x"}) {
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
  EXPECT_TRUE(b200->total_is_nominal());
}

TEST(Hardware, RidgePointOfTheSourceDocument) {
  // Seed 000: the H100 SXM BF16 ridge is about 295 FLOP/byte.
  auto h100 = FindGpu("h100-sxm");
  ASSERT_TRUE(h100.ok());
  EXPECT_NEAR(*h100->bf16_flops / h100->memory_bandwidth, 295, 1);
}

TEST(Hardware, UnknownGpuListsTheKnownOnes) {
  auto g = FindGpu("rtx-9090");
  ASSERT_FALSE(g.ok());
  EXPECT_NE(g.status().message().find("h100-sxm"), std::string::npos);
  EXPECT_NE(g.status().message().find("--gpu-memory"), std::string::npos);
}

}  // namespace
}  // namespace goodput
