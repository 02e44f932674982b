// The CPU runner's numeric kernels. Matrix products go to goodput's own
// kernels where the CPU has them (small_matmul.h, panel_matmul.h), else to
// OpenBLAS (sgemm);
// the rest are plain loops the compiler vectorizes (they are a small share
// of a step: perf/cpu_decode measures it).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace goodput::cpu {

// Y[m x n] = X[m x k] * W[n x k]^T (+ Y when accumulate): W in PyTorch's
// [out, in] layout, row-major. Runs on two threads (the caller and the
// engine's helper, see small_matmul.h): few rows in goodput's dot-product
// kernels (small_matmul.h), more in its packed panels (panel_matmul.h), both
// with AVX2 or AVX-512 whatever kernels OpenBLAS picked; OpenBLAS
// (single-threaded per thread) for the rest.
void MatMulT(const float* x, const float* w, float* y, int64_t m, int64_t n, int64_t k, bool accumulate = false);

// Makes OpenBLAS single-threaded (once per process). The engine splits its
// work over its own two threads: OpenBLAS's pool threads spin after each call
// and, on a 2-core machine, took the cores from the engine's helper thread
// (a decode of 2 requests at 2,048 tokens: 57 ms with them, 42 ms without).
void UseSingleThreadedBlas();

// Which code runs MatMulT and attention's products on this CPU, for the
// serve banner and the measurements it starts: "matrix products: goodput's
// AVX-512 kernels (1-64 rows: a dot product per output; more rows and
// attention: packed panels); CPU: AMD EPYC (2 CPUs), AVX-512F". Where
// OpenBLAS runs a part, it names the kernels OpenBLAS picked (from its own
// table of CPU models, or as OPENBLAS_CORETYPE tells it).
std::string MatMulKernels();

// y = x / rms(x) * weight, per row of `dim` elements.
void RmsNorm(const float* x, const float* weight, float* y, int64_t rows, int64_t dim, float eps);

// out[i] = silu(gate[i]) * up[i] for a row laid out as [gate | up] (2 * dim).
void SiluMul(const float* gate_up, float* out, int64_t rows, int64_t dim);

// Softmax in place over n values; returns nothing, max-subtracted.
void Softmax(float* x, int64_t n);

// Conversions for reduced-precision KV.
uint16_t FloatToBf16(float f);  // round to nearest even
float Bf16ToFloat(uint16_t b);
uint8_t FloatToFp8E4M3(float f);  // saturating, round to nearest even; no NaN produced
float Fp8E4M3ToFloat(uint8_t b);
constexpr float kFp8E4M3Max = 448.0f;

}  // namespace goodput::cpu
