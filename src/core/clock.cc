#include "core/clock.h"

#include <time.h>

#include <chrono>
#include <cstdlib>
#include <string>

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

Result<double> ParseWallTime(std::string_view text) {
  const std::string s(text);
  char* end = nullptr;
  const double number = std::strtod(s.c_str(), &end);
  if (!s.empty() && *end == '\0' && number > 0) return number;
  std::tm tm{};
  double fraction = 0;
  const char* rest = strptime(s.c_str(), "%Y-%m-%dT%H:%M:%S", &tm);
  if (rest && *rest == '.') fraction = std::strtod(rest, const_cast<char**>(&rest));
  if (!rest || std::string_view(rest) != "Z") {
    return Status::InvalidArgument("'" + s + "' is not a time: give Unix seconds or YYYY-MM-DDTHH:MM:SSZ (UTC)");
  }
  return static_cast<double>(timegm(&tm)) + fraction;
}

double SecondsSinceRealtime(const timespec& t) {
  timespec now{};
  clock_gettime(CLOCK_REALTIME, &now);
  return static_cast<double>(now.tv_sec - t.tv_sec) + static_cast<double>(now.tv_nsec - t.tv_nsec) * 1e-9;
}

double ThreadCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

}  // namespace goodput
