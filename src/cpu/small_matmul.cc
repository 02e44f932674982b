#include "cpu/small_matmul.h"

#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

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

// One helper thread; the caller does the other half of the work.
class Helper {
 public:
  Helper() : thread_([this] { Loop(); }) {}
  ~Helper() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  void Run(std::function<void()> task, const std::function<void()>& own) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      task_ = std::move(task);
      done_ = false;
    }
    cv_.notify_all();
    own();
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [this] { return done_; });
  }

 private:
  void Loop() {
    std::unique_lock<std::mutex> lock(mu_);
    while (true) {
      cv_.wait(lock, [this] { return stop_ || task_; });
      if (stop_) return;
      auto task = std::move(task_);
      task_ = nullptr;
      lock.unlock();
      task();
      lock.lock();
      done_ = true;
      cv_.notify_all();
    }
  }
  std::mutex mu_;
  std::condition_variable cv_;
  std::function<void()> task_;
  bool done_ = true, stop_ = false;
  std::thread thread_;
};

}  // namespace

void SmallMatMulT(const float* x, const float* w, float* y, int64_t m, int64_t n, int64_t k, bool accumulate) {
  static Helper helper;
  const int64_t half = n / 2;
  helper.Run([=] { Columns(x, w, y, m, half, n, n, k, accumulate); },
             [=] { Columns(x, w, y, m, 0, half, n, k, accumulate); });
}

}  // namespace goodput::cpu
