#include "cpu/kernels.h"

#include <cblas.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "cpu/small_matmul.h"

namespace goodput::cpu {
namespace {

TEST(Kernels, MatMulTAgainstHandComputed) {
  const float x[] = {1, 2, 3, 4, 5, 6};        // 2 x 3
  const float w[] = {1, 0, 1, 0, 1, 0};        // 2 x 3 (out x in)
  float y[4];
  MatMulT(x, w, y, 2, 2, 3);
  EXPECT_FLOAT_EQ(y[0], 4);  // 1 + 3
  EXPECT_FLOAT_EQ(y[1], 2);
  EXPECT_FLOAT_EQ(y[2], 10);  // 4 + 6
  EXPECT_FLOAT_EQ(y[3], 5);
}

void ExpectEveryShapeMatchesPlainSum();

// Restores the CPU's own instruction set when it goes out of scope.
struct RestoreIsa {
  ~RestoreIsa() { LimitKernelIsa(VectorIsa::kAvx512); }
};

// Every matmul path (sgemv, the blocked decode kernels with their remainder
// rows and columns, prefill chunks, the scalar fallback for odd k, sgemm), at
// every instruction set this CPU has, against a plain double-precision sum.
// Tolerance: fp32 accumulation over k terms of size ~1.
TEST(Kernels, MatMulTEveryPathMatchesPlainSum) {
  RestoreIsa restore;
  for (VectorIsa isa : IsasThisCpuRuns()) {
    LimitKernelIsa(isa);
    SCOPED_TRACE(VectorIsaName(isa));
    ExpectEveryShapeMatchesPlainSum();
  }
}

void ExpectEveryShapeMatchesPlainSum() {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-1, 1);
  for (int64_t m : {1, 2, 3, 5, 7, 8, 9, 13, 32, 64, 70, 129, 200}) {
    // n = 40: halves of 16 and 24 columns; n = 544, k = 300: the panels' blocks of 256 columns and of 256 deep, and
    // what is left of each.
    for (auto [n, k] : {std::pair<int64_t, int64_t>{37, 48}, {64, 768}, {6, 40}, {101, 33}, {40, 24}, {544, 300}}) {
      std::vector<float> x(m * k), w(n * k), y(m * n, 0.5f);
      for (float& v : x) v = u(rng);
      for (float& v : w) v = u(rng);
      for (bool accumulate : {false, true}) {
        std::vector<float> out = y;
        MatMulT(x.data(), w.data(), out.data(), m, n, k, accumulate);
        for (int64_t i = 0; i < m; ++i) {
          for (int64_t j = 0; j < n; ++j) {
            double ref = accumulate ? 0.5 : 0.0;
            for (int64_t t = 0; t < k; ++t) ref += static_cast<double>(x[i * k + t]) * w[j * k + t];
            ASSERT_NEAR(out[i * n + j], ref, 1e-5 * k)
                << "m=" << m << " n=" << n << " k=" << k << " at " << i << "," << j;
          }
        }
      }
    }
  }
}

// The kernels line names goodput's own kernels where the CPU has the
// instructions they need, and what OpenBLAS itself says it runs where it runs.
TEST(Kernels, MatMulKernelsNamesWhatRuns) {
  RestoreIsa restore;
  for (VectorIsa isa : IsasThisCpuRuns()) {
    LimitKernelIsa(isa);
    const std::string line = MatMulKernels();
    // With AVX-512 nothing runs on OpenBLAS; else its kernels are named.
    EXPECT_EQ(line.find(std::string("its ") + openblas_get_corename() + " kernels") != std::string::npos,
              isa != VectorIsa::kAvx512)
        << line;
    const char* want = isa == VectorIsa::kAvx512
                           ? "goodput's AVX-512 kernels (1-64 rows: a dot product per output; more rows and "
                             "attention: packed panels); CPU"
                       : isa == VectorIsa::kAvx2
                           ? "goodput's AVX2 kernels (2-8 rows: a dot product per output; more rows and attention: "
                             "packed panels); one row: OpenBLAS"
                           : "matrix products: OpenBLAS";
    EXPECT_NE(line.find(want), std::string::npos) << line;
  }
}

TEST(Kernels, GoodputCpuIsaNamesTheVariableWhenWrong) {
  setenv("GOODPUT_CPU_ISA", "avx1024", 1);
  const Result<std::optional<VectorIsa>> bad = KernelIsaFromEnvironment();
  setenv("GOODPUT_CPU_ISA", "avx2", 1);
  const Result<std::optional<VectorIsa>> avx2 = KernelIsaFromEnvironment();
  unsetenv("GOODPUT_CPU_ISA");
  const Result<std::optional<VectorIsa>> unset = KernelIsaFromEnvironment();
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(), "GOODPUT_CPU_ISA='avx1024' is not one of avx512, avx2, baseline");
  ASSERT_TRUE(avx2.ok());
  EXPECT_EQ(avx2.value(), VectorIsa::kAvx2);
  ASSERT_TRUE(unset.ok());
  EXPECT_FALSE(unset.value().has_value());
}

TEST(Kernels, Bf16RoundsToNearestEven) {
  EXPECT_EQ(FloatToBf16(1.0f), 0x3f80);
  EXPECT_FLOAT_EQ(Bf16ToFloat(FloatToBf16(3.140625f)), 3.140625f);  // exactly representable
  EXPECT_NEAR(Bf16ToFloat(FloatToBf16(3.14159f)), 3.14159f, 3.14159f / 128);
}

// Every e4m3 code round-trips; values between codes round to the nearer.
TEST(Kernels, Fp8E4M3RoundTripsEveryCode) {
  for (int b = 0; b < 256; ++b) {
    if ((b & 0x7f) == 0x7f) continue;  // NaN
    const float f = Fp8E4M3ToFloat(static_cast<uint8_t>(b));
    if (f == 0 && (b & 0x80)) continue;  // -0
    EXPECT_EQ(FloatToFp8E4M3(f), b) << b << " " << f;
  }
  EXPECT_FLOAT_EQ(Fp8E4M3ToFloat(FloatToFp8E4M3(448.0f)), 448.0f);
  EXPECT_FLOAT_EQ(Fp8E4M3ToFloat(FloatToFp8E4M3(1000.0f)), 448.0f);  // saturates
  EXPECT_FLOAT_EQ(Fp8E4M3ToFloat(FloatToFp8E4M3(1.0625f)), 1.0f);    // halfway to 1.125: even mantissa
  EXPECT_FLOAT_EQ(Fp8E4M3ToFloat(0x01), std::ldexp(1.0f, -9));       // smallest subnormal
}

TEST(Kernels, RmsNormAndSoftmax) {
  const float x[] = {3, 4};
  const float w[] = {1, 2};
  float y[2];
  RmsNorm(x, w, y, 1, 2, 0);
  const float rms = std::sqrt((9.0f + 16.0f) / 2);
  EXPECT_FLOAT_EQ(y[0], 3 / rms);
  EXPECT_FLOAT_EQ(y[1], 8 / rms);
  float s[] = {0, std::log(3.0f)};
  Softmax(s, 2);
  EXPECT_FLOAT_EQ(s[0], 0.25f);
  EXPECT_FLOAT_EQ(s[1], 0.75f);
}

}  // namespace
}  // namespace goodput::cpu
