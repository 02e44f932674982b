#include "core/request_record.h"

namespace goodput {

std::optional<double> Ttft(const RequestRecord& r) {
  if (!r.t_first) return std::nullopt;
  return *r.t_first - r.t_arrival;
}

std::optional<double> Tpot(const RequestRecord& r) {
  if (r.n_out < 2 || !r.t_first || !r.t_last) return std::nullopt;
  return (*r.t_last - *r.t_first) / static_cast<double>(r.n_out - 1);
}

std::optional<double> E2e(const RequestRecord& r) {
  if (!r.t_last) return std::nullopt;
  return *r.t_last - r.t_arrival;
}

double SendLag(const RequestRecord& r) { return r.t_sent - r.t_arrival; }

std::vector<double> Itls(const RequestRecord& r) {
  std::vector<double> out;
  for (size_t i = 1; i < r.chunks.size(); ++i) {
    const int32_t k = r.chunks[i].tokens > 0 ? r.chunks[i].tokens : 1;
    const double gap = (r.chunks[i].t - r.chunks[i - 1].t) / k;
    out.insert(out.end(), static_cast<size_t>(k), gap);
  }
  return out;
}

}  // namespace goodput
