#include "cpu/panel_matmul.h"

#include <cblas.h>
#include <immintrin.h>

#include <algorithm>
#include <array>
#include <utility>
#include <vector>

#include "cpu/kernels.h"
#include "cpu/small_matmul.h"

namespace goodput::cpu {
namespace {

// GCC 12 warns "__Y is used uninitialized" inside its own AVX-512 headers
// (_mm512_undefined_ps; GCC bug 105593, fixed in GCC 13).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"

// R rows of Y, C vectors of its columns: R x C accumulators, per step of k
// C loads of B and R broadcasts of X for R x C FMAs. AVX-512: R <= 6, C = 2
// (12 of the 32 registers); AVX2 the same (12 of 16, with B's 2 and the broadcast).
template <int R, int C>
__attribute__((target("avx512f"))) void Tile512(const float* x, int64_t ldx, const float* b, int64_t ldb, float* y,
                                                int64_t ldy, int64_t k, bool add) {
  __m512 a[R][C];
#pragma GCC unroll 6
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 2
    for (int c = 0; c < C; ++c) a[r][c] = _mm512_setzero_ps();
  for (int64_t t = 0; t < k; ++t) {
    __m512 bv[C];
#pragma GCC unroll 2
    for (int c = 0; c < C; ++c) bv[c] = _mm512_loadu_ps(b + t * ldb + 16 * c);
#pragma GCC unroll 6
    for (int r = 0; r < R; ++r) {
      const __m512 xv = _mm512_set1_ps(x[r * ldx + t]);
#pragma GCC unroll 2
      for (int c = 0; c < C; ++c) a[r][c] = _mm512_fmadd_ps(xv, bv[c], a[r][c]);
    }
  }
#pragma GCC unroll 6
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 2
    for (int c = 0; c < C; ++c) {
      float* out = y + r * ldy + 16 * c;
      _mm512_storeu_ps(out, add ? _mm512_add_ps(_mm512_loadu_ps(out), a[r][c]) : a[r][c]);
    }
}

template <int R, int C>
__attribute__((target("avx2,fma"))) void Tile256(const float* x, int64_t ldx, const float* b, int64_t ldb, float* y,
                                                 int64_t ldy, int64_t k, bool add) {
  __m256 a[R][C];
#pragma GCC unroll 6
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 2
    for (int c = 0; c < C; ++c) a[r][c] = _mm256_setzero_ps();
  for (int64_t t = 0; t < k; ++t) {
    __m256 bv[C];
#pragma GCC unroll 2
    for (int c = 0; c < C; ++c) bv[c] = _mm256_loadu_ps(b + t * ldb + 8 * c);
#pragma GCC unroll 6
    for (int r = 0; r < R; ++r) {
      const __m256 xv = _mm256_broadcast_ss(x + r * ldx + t);
#pragma GCC unroll 2
      for (int c = 0; c < C; ++c) a[r][c] = _mm256_fmadd_ps(xv, bv[c], a[r][c]);
    }
  }
#pragma GCC unroll 6
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 2
    for (int c = 0; c < C; ++c) {
      float* out = y + r * ldy + 8 * c;
      _mm256_storeu_ps(out, add ? _mm256_add_ps(_mm256_loadu_ps(out), a[r][c]) : a[r][c]);
    }
}

#pragma GCC diagnostic pop

using TileFn = void (*)(const float*, int64_t, const float*, int64_t, float*, int64_t, int64_t, bool);

// Tiles of 1..R rows, each of one column vector (the last odd one) or two.
template <int... Rs>
constexpr std::array<std::array<TileFn, 2>, sizeof...(Rs)> Tiles512(std::integer_sequence<int, Rs...>) {
  return {{{Tile512<Rs + 1, 1>, Tile512<Rs + 1, 2>}...}};
}
template <int... Rs>
constexpr std::array<std::array<TileFn, 2>, sizeof...(Rs)> Tiles256(std::integer_sequence<int, Rs...>) {
  return {{{Tile256<Rs + 1, 1>, Tile256<Rs + 1, 2>}...}};
}

// Rows of X a panel of B serves before the next is packed: 64 rows of a
// head's queries (16 KB) stay in L1, of a score matrix in L2.
constexpr int64_t kChunkRows = 64;

// For each chunk of X's rows, each panel of B's columns (one or two vectors
// wide) is copied into `panel` contiguously, then every group of rows is
// multiplied by it. Unpacked, a tile would read k rows of B n floats apart:
// at n = 1,024 each of them on its own page and in the same L1 set (measured
// on the keys: 53 GFLOP/s with AVX2 where OpenBLAS's packed sgemm gave 119).
template <size_t kRows>
void Panels(const std::array<std::array<TileFn, 2>, kRows>& tiles, int64_t lanes, const float* x, const float* b,
            float* y, int64_t m, int64_t n, int64_t k, std::vector<float>& panel) {
  if (static_cast<int64_t>(panel.size()) < 2 * lanes * k) panel.resize(2 * lanes * k);
  for (int64_t i0 = 0; i0 < m; i0 += kChunkRows) {
    const int64_t rows = std::min(kChunkRows, m - i0);
    for (int64_t j = 0; j < n;) {
      const int64_t vectors = std::min<int64_t>(2, (n - j) / lanes), width = vectors * lanes;
      // One group of rows (a decode's few queries) reads B where it is.
      const bool pack = rows > static_cast<int64_t>(kRows);
      if (pack) {
        for (int64_t t = 0; t < k; ++t) std::copy(b + t * n + j, b + t * n + j + width, panel.data() + t * width);
      }
      for (int64_t i = i0; i < i0 + rows;) {
        const int64_t r = std::min<int64_t>(kRows, i0 + rows - i);
        tiles[r - 1][vectors - 1](x + i * k, k, pack ? panel.data() : b + j, pack ? width : n, y + i * n + j, n, k,
                                  false);
        i += r;
      }
      j += width;
    }
  }
}

// Goto's blocking for Y (+)= X * W^T: W's rows [n0, n1) in blocks of
// kBlockColumns outputs by kBlockDepth of k, each block packed once,
// transposed, as panels of two vectors of outputs (kBlockDepth x 2 lanes,
// 16 KB with AVX2: L1); every group of X's rows then meets every panel of the
// block (the block, 256 KB, in L2). X is read k / kBlockDepth x
// n / kBlockColumns times, W once.
constexpr int64_t kBlockDepth = 256, kBlockColumns = 256;

template <size_t kRows>
void PanelsT(const std::array<std::array<TileFn, 2>, kRows>& tiles, int64_t lanes, const float* x, const float* w,
             float* y, int64_t m, int64_t n0, int64_t n1, int64_t n, int64_t k, bool accumulate) {
  thread_local std::vector<float> block;
  block.resize(kBlockDepth * kBlockColumns);
  for (int64_t p = 0; p < k; p += kBlockDepth) {
    const int64_t depth = std::min(kBlockDepth, k - p);
    for (int64_t j0 = n0; j0 < n1; j0 += kBlockColumns) {
      const int64_t columns = std::min(kBlockColumns, n1 - j0);
      for (int64_t c = 0; c < columns; ++c) {  // panel c / (2 lanes), column c % (2 lanes)
        const int64_t width = std::min(2 * lanes, columns - c / (2 * lanes) * (2 * lanes));
        float* panel = block.data() + c / (2 * lanes) * (2 * lanes) * depth;
        const float* row = w + (j0 + c) * k + p;
        for (int64_t t = 0; t < depth; ++t) panel[t * width + c % (2 * lanes)] = row[t];
      }
      for (int64_t i = 0; i < m;) {
        const int64_t r = std::min<int64_t>(kRows, m - i);
        for (int64_t c = 0; c < columns; c += 2 * lanes) {
          const int64_t width = std::min(2 * lanes, columns - c);
          tiles[r - 1][width / lanes - 1](x + i * k + p, k, block.data() + c * depth, width, y + i * n + j0 + c, n,
                                          depth, accumulate || p > 0);
        }
        i += r;
      }
    }
  }
}

constexpr auto kTiles512 = Tiles512(std::make_integer_sequence<int, 6>());
constexpr auto kTiles256 = Tiles256(std::make_integer_sequence<int, 6>());

}  // namespace

bool PanelMatMulTHandles(int64_t n) { return KernelIsa() >= VectorIsa::kAvx2 && n % 8 == 0; }

void PanelMatMulT(const float* x, const float* w, float* y, int64_t m, int64_t n0, int64_t n1, int64_t n, int64_t k,
                  bool accumulate) {
  if (KernelIsa() == VectorIsa::kAvx512 && (n1 - n0) % 16 == 0) {
    PanelsT(kTiles512, 16, x, w, y, m, n0, n1, n, k, accumulate);
  } else {
    PanelsT(kTiles256, 8, x, w, y, m, n0, n1, n, k, accumulate);
  }
}

void PanelMatMul(const float* x, const float* b, float* y, int64_t m, int64_t n, int64_t k, std::vector<float>& panel) {
  const VectorIsa isa = KernelIsa();
  if (isa == VectorIsa::kAvx512 && n % 16 == 0) {
    Panels(kTiles512, 16, x, b, y, m, n, k, panel);
  } else if (isa >= VectorIsa::kAvx2 && n % 8 == 0) {
    Panels(kTiles256, 8, x, b, y, m, n, k, panel);
  } else {
    UseSingleThreadedBlas();
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(m), static_cast<int>(n),
                static_cast<int>(k), 1.0f, x, static_cast<int>(k), b, static_cast<int>(n), 0.0f, y,
                static_cast<int>(n));
  }
}

}  // namespace goodput::cpu
