#include "core/clock.h"

#include <chrono>

namespace goodput {
namespace {

double SteadySeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace

RealClock::RealClock() : origin_(SteadySeconds()) {}

double RealClock::Now() const { return SteadySeconds() - origin_; }

double UnixSeconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

}  // namespace goodput
