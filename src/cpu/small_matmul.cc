#include "cpu/small_matmul.h"

#include <fmt/format.h>
#include <immintrin.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <functional>
#include <mutex>
#include <thread>
#include <utility>

namespace goodput::cpu {
namespace {

// Compiled for AVX2+FMA and for the baseline; the loader picks at run time.
__attribute__((target_clones("arch=x86-64-v3", "default"))) void Columns(const float* x, const float* w, float* y,
                                                                         int64_t m, int64_t n0, int64_t n1, int64_t n,
                                                                         int64_t k, bool accumulate) {
  constexpr int kLanes = 16;
  for (int64_t j = n0; j < n1; ++j) {
    const float* wr = w + j * k;
    for (int64_t i = 0; i < m; ++i) {
      const float* xr = x + i * k;
      float acc[kLanes] = {};
      int64_t t = 0;
      for (; t + kLanes <= k; t += kLanes) {
        for (int u = 0; u < kLanes; ++u) acc[u] += xr[t + u] * wr[t + u];
      }
      float s = 0;
      for (int u = 0; u < kLanes; ++u) s += acc[u];
      for (; t < k; ++t) s += xr[t] * wr[t];
      float& out = y[i * n + j];
      out = accumulate ? out + s : s;
    }
  }
}

// AVX2+FMA register blocking: 4 weight rows x 2 rows of x per pass, 8
// accumulators, so each 8-float step loads 6 vectors for 8 FMAs (the plain
// loop above loads 2 per FMA and is load-bound past 4 rows of x).
__attribute__((target("avx2,fma"))) float Sum8(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

__attribute__((target("avx2,fma"))) void ColumnsAvx2(const float* x, const float* w, float* y, int64_t m, int64_t n0,
                                                     int64_t n1, int64_t n, int64_t k, bool accumulate) {
  int64_t j = n0;
  for (; j + 4 <= n1; j += 4) {
    const float* w0 = w + j * k;
    for (int64_t i = 0; i < m; i += 2) {
      const bool pair = i + 1 < m;
      const float* x0 = x + i * k;
      const float* x1 = pair ? x0 + k : x0;
      __m256 a[4][2];
      for (auto& r : a) r[0] = r[1] = _mm256_setzero_ps();
      for (int64_t t = 0; t < k; t += 8) {
        const __m256 v0 = _mm256_loadu_ps(x0 + t), v1 = _mm256_loadu_ps(x1 + t);
        for (int r = 0; r < 4; ++r) {
          const __m256 wr = _mm256_loadu_ps(w0 + r * k + t);
          a[r][0] = _mm256_fmadd_ps(wr, v0, a[r][0]);
          a[r][1] = _mm256_fmadd_ps(wr, v1, a[r][1]);
        }
      }
      for (int r = 0; r < 4; ++r) {
        for (int q = 0; q < (pair ? 2 : 1); ++q) {
          float& out = y[(i + q) * n + j + r];
          const float s = Sum8(a[r][q]);
          out = accumulate ? out + s : s;
        }
      }
    }
  }
  if (j < n1) Columns(x, w, y, m, j, n1, n, k, accumulate);
}

// AVX-512 register blocking: 4 weight rows x R <= 6 rows of x, 24
// accumulators of 16 floats (of the 32 registers), so each 16-float step
// loads 4 + R vectors for 4R FMAs. Each group of rows of x re-reads the 4
// weight rows from L1; each weight row comes from memory once. (Cutting K into
// L1-sized tiles, 8x3 and 12x2 blockings measured no better here.)
constexpr int kMaxXRows = 6;

// GCC 12 warns "__Y is used uninitialized" inside its own AVX-512 headers
// (_mm512_undefined_ps; GCC bug 105593, fixed in GCC 13).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"

__attribute__((target("avx512f"))) __m256 AddHalves(__m512 v) {
  const __m256 hi = _mm512_castps512_ps256(_mm512_shuffle_f32x4(v, v, 0x4e));  // upper 256 bits
  return _mm256_add_ps(_mm512_castps512_ps256(v), hi);
}

// The four horizontal sums of a, b, c, d as one vector; the reductions share
// their shuffles.
__attribute__((target("avx512f"))) __m128 Sum16x4(__m512 a, __m512 b, __m512 c, __m512 d) {
  const __m256 ab = _mm256_hadd_ps(AddHalves(a), AddHalves(b));  // [a a b b | a a b b]
  const __m256 cd = _mm256_hadd_ps(AddHalves(c), AddHalves(d));
  const __m256 abcd = _mm256_hadd_ps(ab, cd);  // [a b c d | a b c d]
  return _mm_add_ps(_mm256_castps256_ps128(abcd), _mm256_extractf128_ps(abcd, 1));
}

// y[q][r] (+)= x[q] . w[r] for q < R, r < 4. The pragmas matter: without full
// unrolling GCC keeps the accumulators in memory (measured 3x slower).
template <int R>
__attribute__((target("avx512f"))) void Block512(const float* x, const float* w, float* y, int64_t n, int64_t k,
                                                 bool accumulate) {
  __m512 a[4][R];
#pragma GCC unroll 4
  for (auto& r : a)
#pragma GCC unroll 6
    for (auto& v : r) v = _mm512_setzero_ps();
  for (int64_t t = 0; t < k; t += 16) {
    __m512 xv[R];
#pragma GCC unroll 6
    for (int q = 0; q < R; ++q) xv[q] = _mm512_loadu_ps(x + q * k + t);
#pragma GCC unroll 4
    for (int r = 0; r < 4; ++r) {
      __m512 wr = _mm512_loadu_ps(w + r * k + t);
      // Held in a register: for 2-3 rows of x GCC otherwise folds the load
      // into each FMA, loading the weight row R times (measured: 3 rows as
      // slow as 4).
      asm("" : "+v"(wr));
#pragma GCC unroll 6
      for (int q = 0; q < R; ++q) a[r][q] = _mm512_fmadd_ps(wr, xv[q], a[r][q]);
    }
  }
#pragma GCC unroll 6
  for (int q = 0; q < R; ++q) {
    const __m128 s = Sum16x4(a[0][q], a[1][q], a[2][q], a[3][q]);
    float* out = y + q * n;
    _mm_storeu_ps(out, accumulate ? _mm_add_ps(_mm_loadu_ps(out), s) : s);
  }
}

using BlockFn = void (*)(const float*, const float*, float*, int64_t, int64_t, bool);

template <int... Rs>
constexpr std::array<BlockFn, sizeof...(Rs) + 1> MakeBlocks(std::integer_sequence<int, Rs...>) {
  return {nullptr, Block512<Rs + 1>...};
}

void ColumnsAvx512(const float* x, const float* w, float* y, int64_t m, int64_t n0, int64_t n1, int64_t n, int64_t k,
                   bool accumulate) {
  static constexpr auto kBlocks = MakeBlocks(std::make_integer_sequence<int, kMaxXRows>());
  int64_t j = n0;
  for (; j + 4 <= n1; j += 4) {
    // Near-equal groups (32 rows: 6+6+5+5+5+5, not 6x5+2): a thin last
    // group would pay 4 weight loads for only a few FMAs.
    const int64_t groups = (m + kMaxXRows - 1) / kMaxXRows;
    for (int64_t g = 0, i = 0; g < groups; ++g) {
      const int64_t rows = (m - i + (groups - g) - 1) / (groups - g);
      kBlocks[rows](x + i * k, w + j * k, y + i * n + j, n, k, accumulate);
      i += rows;
    }
  }
  if (j < n1) Columns(x, w, y, m, j, n1, n, k, accumulate);
}

#pragma GCC diagnostic pop

// The widest instructions the CPU has. Function-local so that the CPU model
// is initialised before the first query (a namespace-scope initialiser could
// run before libgcc's).
VectorIsa CpuIsa() {
  static const VectorIsa isa = [] {
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f")) return VectorIsa::kAvx512;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return VectorIsa::kAvx2;
    return VectorIsa::kBaseline;
  }();
  return isa;
}

// The cap LimitKernelIsa set, else GOODPUT_CPU_ISA's (read once), else none.
std::atomic<int>& IsaCap() {
  static std::atomic<int> cap{[] {
    const Result<std::optional<VectorIsa>> env = KernelIsaFromEnvironment();
    return static_cast<int>(env.ok() && env.value() ? *env.value() : VectorIsa::kAvx512);
  }()};
  return cap;
}

bool HasAvx512() { return KernelIsa() == VectorIsa::kAvx512; }
bool HasAvx2() { return KernelIsa() >= VectorIsa::kAvx2; }

void ColumnsBest(const float* x, const float* w, float* y, int64_t m, int64_t n0, int64_t n1, int64_t n, int64_t k,
                 bool accumulate) {
  if (HasAvx512() && k % 16 == 0) {
    ColumnsAvx512(x, w, y, m, n0, n1, n, k, accumulate);
  } else if (HasAvx2() && k % 8 == 0) {
    ColumnsAvx2(x, w, y, m, n0, n1, n, k, accumulate);
  } else {
    Columns(x, w, y, m, n0, n1, n, k, accumulate);
  }
}

// One helper thread; the caller does the other half of the work. A step
// makes ~100 of these calls, so the hand-off spins briefly before sleeping:
// a condition-variable wake-up alone costs tens of microseconds each time.
class Helper {
 public:
  Helper() : thread_([this] { Loop(); }) {}
  ~Helper() {
    stop_.store(true);
    Post();
    thread_.join();
  }
  void Run(std::function<void()> task, const std::function<void()>& own) {
    task_ = std::move(task);
    done_.store(false, std::memory_order_release);
    Post();
    own();
    for (int spin = 0; !done_.load(std::memory_order_acquire); ++spin) Wait(spin);
  }

 private:
  // One round of a wait: spin briefly, then yield. If the two threads share a
  // core (the machine is busy), a pure spin keeps the other from running until
  // the time slice ends (measured: 7 ms steps instead of 20 us on the tiny model).
  static void Wait(int spin) {
    if (spin < 2000) {
      _mm_pause();
    } else {
      std::this_thread::yield();
    }
  }
  void Post() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      ++posted_;
    }
    seen_posted_.fetch_add(1, std::memory_order_release);
    cv_.notify_one();
  }
  void Loop() {
    uint64_t taken = 0;
    while (true) {
      for (int spin = 0; spin < 20000 && seen_posted_.load(std::memory_order_acquire) == taken; ++spin) Wait(spin);
      if (seen_posted_.load(std::memory_order_acquire) == taken) {
        std::unique_lock<std::mutex> lock(mu_);
        cv_.wait(lock, [&] { return posted_ != taken; });
      }
      ++taken;
      if (stop_.load()) return;
      task_();
      done_.store(true, std::memory_order_release);
    }
  }
  std::mutex mu_;
  std::condition_variable cv_;
  uint64_t posted_ = 0;               // under mu_, for the sleeping wait
  std::atomic<uint64_t> seen_posted_{0};  // the same count, for the spinning wait
  std::atomic<bool> done_{true}, stop_{false};
  std::function<void()> task_;
  std::thread thread_;
};

}  // namespace

const char* VectorIsaName(VectorIsa isa) {
  switch (isa) {
    case VectorIsa::kAvx512:
      return "avx512";
    case VectorIsa::kAvx2:
      return "avx2";
    case VectorIsa::kBaseline:
      return "baseline";
  }
  return "?";
}

Result<std::optional<VectorIsa>> KernelIsaFromEnvironment() {
  const char* v = std::getenv("GOODPUT_CPU_ISA");
  if (!v || !*v) return std::optional<VectorIsa>();
  for (VectorIsa isa : {VectorIsa::kAvx512, VectorIsa::kAvx2, VectorIsa::kBaseline}) {
    if (std::string(v) == VectorIsaName(isa)) return std::optional<VectorIsa>(isa);
  }
  return Status::InvalidArgument(fmt::format("GOODPUT_CPU_ISA='{}' is not one of avx512, avx2, baseline", v));
}

VectorIsa KernelIsa() { return std::min(CpuIsa(), static_cast<VectorIsa>(IsaCap().load())); }

std::vector<VectorIsa> IsasThisCpuRuns() {
  std::vector<VectorIsa> out;
  for (VectorIsa isa : {VectorIsa::kAvx512, VectorIsa::kAvx2, VectorIsa::kBaseline}) {
    if (isa <= CpuIsa()) out.push_back(isa);
  }
  return out;
}

void LimitKernelIsa(VectorIsa isa) { IsaCap().store(static_cast<int>(isa)); }

bool SmallMatMulHandles(int64_t m) {
  if (HasAvx512()) return m >= 1 && m <= 64;
  return HasAvx2() && m >= 2 && m <= 8;
}

std::string SmallMatMulRows() {
  if (HasAvx512()) return "1-64 rows";
  return HasAvx2() ? "2-8 rows" : "";
}

void RunOnTwoThreads(std::function<void()> helper_task, const std::function<void()>& own_task) {
  static Helper helper;
  helper.Run(std::move(helper_task), own_task);
}

void SmallMatMulT(const float* x, const float* w, float* y, int64_t m, int64_t n, int64_t k, bool accumulate) {
  const int64_t half = n / 2 / 4 * 4;  // keep the blocked kernel's groups of 4 whole
  RunOnTwoThreads([=] { ColumnsBest(x, w, y, m, half, n, n, k, accumulate); },
                  [=] { ColumnsBest(x, w, y, m, 0, half, n, k, accumulate); });
}

}  // namespace goodput::cpu
