#include "cpu/rope.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace goodput::cpu {
namespace {

void Llama3(const RopeSpec& s, std::vector<double>& inv) {
  const double old_len = static_cast<double>(s.original_max_position_embeddings);
  const double low_wavelen = old_len / s.low_freq_factor;
  const double high_wavelen = old_len / s.high_freq_factor;
  for (double& f : inv) {
    const double wavelen = 2 * M_PI / f;
    if (wavelen > low_wavelen) {
      f /= s.factor;
    } else if (wavelen >= high_wavelen) {  // between: smooth interpolation
      const double smooth = (old_len / wavelen - s.low_freq_factor) / (s.high_freq_factor - s.low_freq_factor);
      f = (1 - smooth) * f / s.factor + smooth * f;
    }
  }
}

double YarnMscale(double scale, double mscale) { return scale <= 1 ? 1.0 : 0.1 * mscale * std::log(scale) + 1.0; }

void Yarn(const RopeSpec& s, int64_t dim, int64_t max_pos, std::vector<double>& inv, double& attention_factor) {
  const double base = s.theta;
  const double orig =
      static_cast<double>(s.original_max_position_embeddings > 0 ? s.original_max_position_embeddings : max_pos);
  attention_factor = s.mscale > 0 && s.mscale_all_dim > 0
                         ? YarnMscale(s.factor, s.mscale) / YarnMscale(s.factor, s.mscale_all_dim)
                         : YarnMscale(s.factor, 1.0);
  auto correction_dim = [&](double rotations) {
    return (static_cast<double>(dim) * std::log(orig / (rotations * 2 * M_PI))) / (2 * std::log(base));
  };
  double low = correction_dim(s.beta_fast), high = correction_dim(s.beta_slow);
  if (s.truncate) {
    low = std::floor(low);
    high = std::ceil(high);
  }
  low = std::max(low, 0.0);
  high = std::min(high, static_cast<double>(dim - 1));
  if (low == high) high += 0.001;
  for (size_t i = 0; i < inv.size(); ++i) {
    const double ramp = std::clamp((static_cast<double>(i) - low) / (high - low), 0.0, 1.0);
    const double extrapolation = 1.0 - ramp;
    const double interp = inv[i] / s.factor;
    inv[i] = interp * (1 - extrapolation) + inv[i] * extrapolation;
  }
}

}  // namespace

Result<Rope> Rope::Create(const RopeSpec& spec, int64_t head_dim, int64_t max_pos) {
  Rope r;
  r.rotary_dim_ = static_cast<int64_t>(static_cast<double>(head_dim) * spec.partial_rotary_factor);
  r.rotary_dim_ -= r.rotary_dim_ % 2;
  if (r.rotary_dim_ <= 0) return Status::InvalidArgument("rotary dimension must be positive");
  for (int64_t i = 0; i < r.rotary_dim_ / 2; ++i) {
    r.inv_freq_.push_back(1.0 / std::pow(spec.theta, static_cast<double>(2 * i) / static_cast<double>(r.rotary_dim_)));
  }
  if (spec.type == "default") {
  } else if (spec.type == "linear") {
    for (double& f : r.inv_freq_) f /= spec.factor;
  } else if (spec.type == "llama3") {
    if (spec.original_max_position_embeddings <= 0) {
      return Status::InvalidArgument("llama3 rope scaling needs original_max_position_embeddings");
    }
    Llama3(spec, r.inv_freq_);
  } else if (spec.type == "yarn") {
    Yarn(spec, r.rotary_dim_, max_pos, r.inv_freq_, r.attention_factor_);
  } else {
    return Status::InvalidArgument(fmt::format("rope scaling type '{}' is not supported by the CPU runner", spec.type));
  }
  return r;
}

void Rope::Angles(int64_t position, float* cos_out, float* sin_out) const {
  const double p = static_cast<double>(position);
  for (size_t i = 0; i < inv_freq_.size(); ++i) {
    const double a = p * inv_freq_[i];
    cos_out[i] = static_cast<float>(std::cos(a) * attention_factor_);
    sin_out[i] = static_cast<float>(std::sin(a) * attention_factor_);
  }
}

void Rope::Apply(float* x, int64_t heads, int64_t head_dim, const float* cos, const float* sin) const {
  const int64_t half = rotary_dim_ / 2;
  for (int64_t h = 0; h < heads; ++h) {
    float* v = x + h * head_dim;
    for (int64_t i = 0; i < half; ++i) {
      const float a = v[i], b = v[i + half];
      v[i] = a * cos[i] - b * sin[i];
      v[i + half] = b * cos[i] + a * sin[i];
    }
  }
}

}  // namespace goodput::cpu
