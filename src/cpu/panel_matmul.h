// Products of many rows on the calling thread, in register tiles that
// broadcast X's values and accumulate whole vectors of Y's columns (no sums
// across lanes): attention's two products (queries times the keys stored
// transposed; scores times the values), where a row of X is one head (64
// values) and a dot product per output spends as long on its horizontal sum
// as on its multiplies; and a prefill's projections (MatMulT of many rows),
// with W packed in cache-sized blocks as the product goes.
#pragma once

#include <cstdint>
#include <vector>

namespace goodput::cpu {

// Y[m x n] = X[m x k] * B[k x n], all row-major. Uses KernelIsa()'s
// instructions where n is a multiple of 16 (AVX-512) or 8 (AVX2), OpenBLAS's
// sgemm otherwise. `panel` is scratch (grows to 32 k floats, reused).
void PanelMatMul(const float* x, const float* b, float* y, int64_t m, int64_t n, int64_t k, std::vector<float>& panel);

// Whether PanelMatMulT runs an n-column Y on this CPU: AVX2 or AVX-512, n a
// multiple of 8.
bool PanelMatMulTHandles(int64_t n);

// MatMulT's contract (Y (+)= X * W^T, W [n x k]) for Y's columns [n0, n1)
// (n1 - n0 a multiple of 8), on the calling thread, with W packed in blocks
// as the products go: the kernel for many rows of X (prefill), where a
// dot product per output runs at half the FMA rate (perf/cpu_decode).
void PanelMatMulT(const float* x, const float* w, float* y, int64_t m, int64_t n0, int64_t n1, int64_t n, int64_t k,
                  bool accumulate);

}  // namespace goodput::cpu
