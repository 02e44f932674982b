#include "measure/run.h"

#include <algorithm>
#include <cmath>

namespace goodput {

Window MeasurementWindow(const Workload& w, const std::vector<RequestRecord>& records) {
  Window win{0, 0};
  if (records.empty()) return win;
  if (w.HasProfile()) {  // the profile's steps are the clock: windows line up with them
    win.start = w.warmup.seconds.value_or(0);
    win.end = std::max(std::nextafter(win.start, 1e300), w.ProfileEnd() - w.cooldown.seconds.value_or(0));
    return win;
  }
  std::vector<double> arrivals;
  for (const auto& r : records) arrivals.push_back(r.t_arrival);
  std::sort(arrivals.begin(), arrivals.end());
  const auto n = static_cast<int64_t>(arrivals.size());
  const double first = arrivals.front(), last = arrivals.back();
  win.start = w.warmup.seconds ? first + *w.warmup.seconds
                               : arrivals[std::min<int64_t>(n - 1, static_cast<int64_t>(w.warmup.fraction * n))];
  // A closed loop's first wave (each client's first request, known by order
  // of admission, not by timestamps: the client sends them microseconds
  // apart) is a transient, whatever the warm-up share says: measure from
  // after its last one.
  double last_first_wave = -1;
  for (const auto& r : records) {
    if (r.first_wave) last_first_wave = std::max(last_first_wave, r.t_arrival);
  }
  if (last_first_wave >= 0 && win.start <= last_first_wave) win.start = std::nextafter(last_first_wave, 1e300);
  if (first == last && last_first_wave < 0) {
    // An offline batch (everything arrives at once): measured by how fast it
    // drains, from the arrival to the last token.
    double drained = first;
    for (const auto& r : records) drained = std::max(drained, r.t_last.value_or(first));
    return Window{first, std::nextafter(drained, 1e300)};
  }
  const int64_t cut = static_cast<int64_t>(w.cooldown.fraction * n);
  win.end =
      w.cooldown.seconds ? last - *w.cooldown.seconds : (cut > 0 ? arrivals[n - cut] : std::nextafter(last, 1e300));
  if (win.end <= win.start) win.end = std::nextafter(win.start, 1e300);
  return win;
}

}  // namespace goodput
