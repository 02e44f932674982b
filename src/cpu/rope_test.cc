#include "cpu/rope.h"

#include <cmath>

#include <gtest/gtest.h>

#include "model/catalog.h"

namespace goodput::cpu {
namespace {

// Llama 3.1 (theta 500000, factor 8, low 1, high 4, original 8192): high
// frequencies (wavelength < 2048) stay, low ones (> 8192) divide by 8.
TEST(Rope, Llama3Scaling) {
  const ModelSpec m = *LoadModel("llama-3.1-8b");
  auto r = Rope::Create(m.rope, 128, m.max_position_embeddings);
  ASSERT_TRUE(r.ok()) << r.status().message();
  const auto& f = r->inv_freq();
  ASSERT_EQ(f.size(), 64u);
  EXPECT_DOUBLE_EQ(f[0], 1.0);
  const double plain_last = 1.0 / std::pow(500000.0, 126.0 / 128);
  EXPECT_NEAR(f[63], plain_last / 8, 1e-15);
  for (size_t i = 1; i < f.size(); ++i) EXPECT_LT(f[i], f[i - 1]);  // still monotone through the smoothed band
  EXPECT_DOUBLE_EQ(r->attention_factor(), 1.0);
}

// gpt-oss's YaRN (factor 32): attention scaled by 0.1 ln 32 + 1; the fastest
// frequency extrapolates (kept), the slowest interpolates (/32).
TEST(Rope, YarnScaling) {
  const ModelSpec m = *LoadModel("gpt-oss-20b");
  auto r = Rope::Create(m.rope, 64, m.max_position_embeddings);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_NEAR(r->attention_factor(), 0.1 * std::log(32.0) + 1, 1e-12);
  EXPECT_DOUBLE_EQ(r->inv_freq()[0], 1.0);
  EXPECT_NEAR(r->inv_freq()[31], 1.0 / std::pow(150000.0, 62.0 / 64) / 32, 1e-15);
}

TEST(Rope, RotationKeepsNormsAndRejectsUnknownTypes) {
  RopeSpec spec;
  auto r = Rope::Create(spec, 8, 128);
  ASSERT_TRUE(r.ok());
  float cos[4], sin[4];
  r->Angles(17, cos, sin);
  float v[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  double before = 0, after = 0;
  for (float x : v) before += x * x;
  r->Apply(v, 1, 8, cos, sin);
  for (float x : v) after += x * x;
  EXPECT_NEAR(after, before, 1e-3);
  spec.type = "longrope";
  EXPECT_FALSE(Rope::Create(spec, 8, 128).ok());
}

}  // namespace
}  // namespace goodput::cpu
