// Y = X * W^T for a few rows of X (decode batches): streams each weight row
// once and reuses it for every row of X while it sits in L1. OpenBLAS's sgemm
// packs all of W first, which at small batch reads the weights twice and is
// far from the bandwidth limit; this is what keeps a decode step near
// "weights / bandwidth" until the batch reaches the arithmetic ridge.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

namespace goodput::cpu {

// Whether SmallMatMulT beats OpenBLAS for an m-row X on this CPU (see
// bench/cpu_decode): with AVX-512 for 1-64 rows (also beating sgemv at one
// row), with AVX2 for 2-8 rows (sgemv is faster at one row).
bool SmallMatMulHandles(int64_t m);

// The rows SmallMatMulT takes and the instructions it uses on this CPU:
// "AVX-512 kernels for 1-64 rows", "AVX2 kernels for 2-8 rows", or "" (none).
std::string SmallMatMulKernels();

// Same contract as MatMulT; splits the output columns over two threads.
void SmallMatMulT(const float* x, const float* w, float* y, int64_t m, int64_t n, int64_t k, bool accumulate);

// Runs `helper_task` on the engine's one helper thread (the one SmallMatMulT
// uses) and `own_task` on the caller; returns when both are done. Not
// reentrant: one caller at a time (the engine's step loop).
void RunOnTwoThreads(std::function<void()> helper_task, const std::function<void()>& own_task);

}  // namespace goodput::cpu
