// Y = X * W^T for a few rows of X (decode batches): streams each weight row
// once and reuses it for every row of X while it sits in L1. OpenBLAS's sgemm
// packs all of W first, which at small batch reads the weights twice and is
// far from the bandwidth limit; this is what keeps a decode step near
// "weights / bandwidth" until the batch reaches the arithmetic ridge.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"

namespace goodput::cpu {

// The vector instructions goodput's kernels use, widest last.
enum class VectorIsa { kBaseline, kAvx2, kAvx512 };
const char* VectorIsaName(VectorIsa isa);  // "baseline", "avx2", "avx512"

// What goodput's kernels use: the widest the CPU has (AVX-512F; AVX2 with
// FMA; else the baseline), capped by GOODPUT_CPU_ISA or LimitKernelIsa.
VectorIsa KernelIsa();

// GOODPUT_CPU_ISA (avx512 | avx2 | baseline): caps the kernels' instructions,
// as OPENBLAS_CORETYPE picks OpenBLAS's, to compare kernels or step around one.
// Empty when unset; an error naming the variable for another value (the
// kernels then ignore it: goodput serve refuses to start on it).
Result<std::optional<VectorIsa>> KernelIsaFromEnvironment();

// The instruction sets goodput's kernels can run at on this CPU, widest first.
std::vector<VectorIsa> IsasThisCpuRuns();

// Caps KernelIsa at `isa` (never above the CPU's) from now on, for tests and
// bench programs that run each path on one machine.
void LimitKernelIsa(VectorIsa isa);

// Whether SmallMatMulT beats OpenBLAS for an m-row X on this CPU (see
// perf/cpu_decode): with AVX-512 for 1-64 rows (also beating sgemv at one
// row), with AVX2 for 2-8 rows (sgemv is faster at one row).
bool SmallMatMulHandles(int64_t m);

// The rows SmallMatMulT takes on this CPU: "1-64 rows" (AVX-512), "2-8 rows"
// (AVX2), or "" (none).
std::string SmallMatMulRows();

// Same contract as MatMulT; splits the output columns over two threads.
void SmallMatMulT(const float* x, const float* w, float* y, int64_t m, int64_t n, int64_t k, bool accumulate);

// Runs `helper_task` on the engine's one helper thread (the one SmallMatMulT
// uses) and `own_task` on the caller; returns when both are done. Not
// reentrant: one caller at a time (the engine's step loop).
void RunOnTwoThreads(std::function<void()> helper_task, const std::function<void()>& own_task);

}  // namespace goodput::cpu
