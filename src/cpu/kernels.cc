#include "cpu/kernels.h"

#include <cblas.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <optional>

#include "core/host.h"
#include "cpu/panel_matmul.h"
#include "cpu/small_matmul.h"

namespace goodput::cpu {
namespace {

// The rows of X a chunk takes where the panels cannot run (an output count
// that is not a multiple of 8: the vocabulary): the most SmallMatMulT takes
// with AVX-512.
constexpr int64_t kChunkRows = 64;

std::string CpuLine() {
  __builtin_cpu_init();
  const char* isa = __builtin_cpu_supports("avx512f") ? "AVX-512F"
                    : __builtin_cpu_supports("avx2")  ? "AVX2"
                                                      : "no AVX2";
  const Result<std::optional<VectorIsa>> env = KernelIsaFromEnvironment();
  const bool capped = env.ok() && env.value() && KernelIsa() == *env.value() && *env.value() != VectorIsa::kAvx512;
  return fmt::format(
      "CPU: {}, {}{}", HostCpuName(), isa,
      capped ? fmt::format(" (goodput's kernels capped by GOODPUT_CPU_ISA={})", VectorIsaName(KernelIsa())) : "");
}

}  // namespace

void UseSingleThreadedBlas() {
  static std::once_flag once;
  std::call_once(once, [] { openblas_set_num_threads(1); });
}

std::string MatMulKernels() {
  // openblas_get_config(): "OpenBLAS 0.3.21 NO_LAPACKE DYNAMIC_ARCH ..."; its first two words.
  const std::string config = openblas_get_config();
  const std::string blas = config.substr(0, config.find(' ', config.find(' ') + 1));
  // The environment may pick OpenBLAS's kernels (OPENBLAS_CORETYPE); say so, it is not the CPU's choice.
  const char* forced = std::getenv("OPENBLAS_CORETYPE");
  const std::string kernels = fmt::format("(its {} kernels{})", openblas_get_corename(),
                                          forced ? fmt::format(", as OPENBLAS_CORETYPE={} asks", forced) : "");
  const std::string sgemm = fmt::format("{} sgemm {}", blas, kernels),
                    sgemv = fmt::format("{} sgemv {}", blas, kernels);
  if (KernelIsa() == VectorIsa::kBaseline) return fmt::format("matrix products: {}; {}", sgemm, CpuLine());
  return fmt::format(
      "matrix products: goodput's {} kernels ({}: a dot product per output; more rows and attention: "
      "packed panels){}; {}",
      KernelIsa() == VectorIsa::kAvx512 ? "AVX-512" : "AVX2", SmallMatMulRows(),
      SmallMatMulHandles(1) ? "" : fmt::format("; one row: {}", sgemv), CpuLine());
}

void MatMulT(const float* x, const float* w, float* y, int64_t m, int64_t n, int64_t k, bool accumulate) {
  if (SmallMatMulHandles(m)) {  // decode batches: stream W once (see small_matmul.h)
    SmallMatMulT(x, w, y, m, n, k, accumulate);
    return;
  }
  if (m > 1 && PanelMatMulTHandles(n)) {  // prefill: packed panels, whatever kernels the BLAS picked
    const int64_t half = n / 2 / 16 * 16;
    RunOnTwoThreads([=] { PanelMatMulT(x, w, y, m, half, n, n, k, accumulate); },
                    [=] { PanelMatMulT(x, w, y, m, 0, half, n, k, accumulate); });
    return;
  }
  if (m > 1 && KernelIsa() != VectorIsa::kBaseline) {
    for (int64_t row = 0; row < m; row += kChunkRows) {
      SmallMatMulT(x + row * k, w, y + row * n, std::min(kChunkRows, m - row), n, k, accumulate);
    }
    return;
  }
  UseSingleThreadedBlas();
  const float beta = accumulate ? 1.0f : 0.0f;
  // Output columns [from, to): rows [from, to) of W.
  const auto columns = [=](int64_t from, int64_t to) {
    const int cols = static_cast<int>(to - from);
    if (m == 1) {  // one row: OpenBLAS's sgemv streams W once
      cblas_sgemv(CblasRowMajor, CblasNoTrans, cols, static_cast<int>(k), 1.0f, w + from * k, static_cast<int>(k), x,
                  1, beta, y + from, 1);
      return;
    }
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<int>(m), cols, static_cast<int>(k), 1.0f, x,
                static_cast<int>(k), w + from * k, static_cast<int>(k), beta, y + from, static_cast<int>(n));
  };
  const int64_t half = n / 2;
  RunOnTwoThreads([=] { columns(half, n); }, [=] { columns(0, half); });
}

void RmsNorm(const float* x, const float* weight, float* y, int64_t rows, int64_t dim, float eps) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * dim;
    float* yr = y + r * dim;
    float ss = 0;
    for (int64_t i = 0; i < dim; ++i) ss += xr[i] * xr[i];
    const float inv = 1.0f / std::sqrt(ss / static_cast<float>(dim) + eps);
    for (int64_t i = 0; i < dim; ++i) yr[i] = xr[i] * inv * weight[i];
  }
}

void SiluMul(const float* gate_up, float* out, int64_t rows, int64_t dim) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* g = gate_up + r * 2 * dim;
    const float* u = g + dim;
    float* o = out + r * dim;
    for (int64_t i = 0; i < dim; ++i) o[i] = g[i] / (1.0f + std::exp(-g[i])) * u[i];
  }
}

void Softmax(float* x, int64_t n) {
  float mx = -INFINITY;
  for (int64_t i = 0; i < n; ++i) mx = std::max(mx, x[i]);
  float sum = 0;
  for (int64_t i = 0; i < n; ++i) {
    x[i] = std::exp(x[i] - mx);
    sum += x[i];
  }
  const float inv = 1.0f / sum;
  for (int64_t i = 0; i < n; ++i) x[i] *= inv;
}

uint16_t FloatToBf16(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  if ((u & 0x7fffffff) > 0x7f800000) return static_cast<uint16_t>((u >> 16) | 0x40);  // quiet NaN
  u += 0x7fff + ((u >> 16) & 1);
  return static_cast<uint16_t>(u >> 16);
}

float Bf16ToFloat(uint16_t b) {
  const uint32_t u = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// e4m3 (OCP "fn"): 1 sign, 4 exponent (bias 7), 3 mantissa bits; max 448,
// subnormals below 2^-6; no infinities. Values beyond 448 saturate.
uint8_t FloatToFp8E4M3(float f) {
  const uint8_t sign = std::signbit(f) ? 0x80 : 0;
  float a = std::fabs(f);
  if (!(a == a)) return 0x7f;  // NaN
  if (a >= kFp8E4M3Max) return sign | 0x7e;
  if (a < std::ldexp(1.0f, -10)) {  // below half the smallest subnormal step rounds toward 0 or min
    const float q = std::nearbyint(a / std::ldexp(1.0f, -9));
    return sign | static_cast<uint8_t>(q);
  }
  int e;
  std::frexp(a, &e);  // a = m * 2^e, m in [0.5, 1)
  int exp = e - 1;    // a = 1.xxx * 2^exp
  if (exp < -6) {     // subnormal: multiples of 2^-9
    const float q = std::nearbyint(a / std::ldexp(1.0f, -9));
    return sign | static_cast<uint8_t>(q);  // q <= 8: 8 becomes the smallest normal (0x08)
  }
  float mant = std::nearbyint((a / std::ldexp(1.0f, exp) - 1.0f) * 8.0f);
  if (mant >= 8) {
    mant = 0;
    ++exp;
  }
  if (exp > 8 || (exp == 8 && mant > 6)) return sign | 0x7e;
  return sign | static_cast<uint8_t>(((exp + 7) << 3) | static_cast<int>(mant));
}

float Fp8E4M3ToFloat(uint8_t b) {
  const float sign = (b & 0x80) ? -1.0f : 1.0f;
  const int exp = (b >> 3) & 0xf;
  const int mant = b & 0x7;
  if (exp == 0xf && mant == 0x7) return NAN;
  if (exp == 0) return sign * std::ldexp(static_cast<float>(mant), -9);
  return sign * std::ldexp(1.0f + static_cast<float>(mant) / 8.0f, exp - 7);
}

}  // namespace goodput::cpu
