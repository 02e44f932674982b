// Y = X * W^T for a few rows of X (decode batches): streams each weight row
// once and reuses it for every row of X while it sits in L1. OpenBLAS's sgemm
// packs all of W first, which at small batch reads the weights twice and is
// far from the bandwidth limit; this is what keeps a decode step near
// "weights / bandwidth" until the batch reaches the arithmetic ridge.
#pragma once

#include <cstdint>

namespace goodput::cpu {

// Rows up to which SmallMatMulT beats sgemm on this kind of machine (see
// bench/cpu_decode).
constexpr int64_t kSmallMatMulMaxRows = 8;

// Same contract as MatMulT; splits the output columns over two threads.
void SmallMatMulT(const float* x, const float* w, float* y, int64_t m, int64_t n, int64_t k, bool accumulate);

}  // namespace goodput::cpu
