// The Clock seam: the only place goodput reads time. The engine and the
// scheduler take `now` from a Clock, so the server (RealClock) and the
// simulator (VirtualClock) run the same code.
#pragma once

#include <ctime>
#include <string_view>

#include "core/status.h"

namespace goodput {

class Clock {
 public:
  virtual ~Clock() = default;
  // Seconds since an arbitrary, fixed origin.
  virtual double Now() const = 0;
  // Lets `seconds` of modeled work pass. A real clock ignores it (real work
  // takes its own time); a virtual clock moves forward by it.
  virtual void Elapse(double seconds) = 0;
};

// Monotonic wall time (std::chrono::steady_clock).
class RealClock final : public Clock {
 public:
  RealClock();
  double Now() const override;
  void Elapse(double) override {}

 private:
  double origin_;
};

// Simulated time, moved only by Elapse and AdvanceTo.
class VirtualClock final : public Clock {
 public:
  double Now() const override { return now_; }
  void Elapse(double seconds) override { now_ += seconds; }
  // Jumps forward to `t` (never backwards).
  void AdvanceTo(double t) {
    if (t > now_) now_ = t;
  }

 private:
  double now_ = 0;
};

// Seconds since the Unix epoch (wall time), for "created" fields in API
// responses; never for measuring durations.
double UnixSeconds();

// A wall-clock instant as Unix seconds: a number ("1796364000.5") or UTC
// ISO 8601 ("2026-12-04T06:00:00Z", fractional seconds allowed). Errors
// name the text.
Result<double> ParseWallTime(std::string_view text);

// How long ago a CLOCK_REALTIME instant was (for kernel timestamps, such as a
// socket's receive time, which the kernel gives in wall time).
double SecondsSinceRealtime(const timespec& t);

// CPU seconds the calling thread has used (CLOCK_THREAD_CPUTIME_ID): for
// benchmarks that measure a thread's own work on a shared machine.
double ThreadCpuSeconds();

}  // namespace goodput
