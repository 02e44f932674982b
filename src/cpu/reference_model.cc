#include "cpu/reference_model.h"

#include <cmath>

namespace goodput::cpu {
namespace {

std::vector<float> MatVec(const std::vector<float>& w, const std::vector<float>& x, int64_t out, int64_t in,
                          int64_t row_offset = 0) {
  std::vector<float> y(static_cast<size_t>(out), 0.0f);
  for (int64_t o = 0; o < out; ++o) {
    double acc = 0;
    for (int64_t i = 0; i < in; ++i) acc += static_cast<double>(w[(row_offset + o) * in + i]) * x[i];
    y[o] = static_cast<float>(acc);
  }
  return y;
}

std::vector<float> Norm(const std::vector<float>& x, const std::vector<float>& w, double eps) {
  double ss = 0;
  for (float v : x) ss += static_cast<double>(v) * v;
  const double inv = 1.0 / std::sqrt(ss / static_cast<double>(x.size()) + eps);
  std::vector<float> y(x.size());
  for (size_t i = 0; i < x.size(); ++i) y[i] = static_cast<float>(x[i] * inv * w[i]);
  return y;
}

void Rotate(float* v, int64_t dim, int64_t pos, double theta) {
  for (int64_t i = 0; i < dim / 2; ++i) {
    const double a = static_cast<double>(pos) / std::pow(theta, 2.0 * i / dim);
    const double x = v[i], y = v[i + dim / 2];
    v[i] = static_cast<float>(x * std::cos(a) - y * std::sin(a));
    v[i + dim / 2] = static_cast<float>(y * std::cos(a) + x * std::sin(a));
  }
}

}  // namespace

std::vector<float> ReferenceModel::Forward(int32_t token) {
  const int64_t h = m_.hidden_size, hd = m_.attn.head_dim, nh = m_.attn.num_heads, nkv = m_.attn.num_kv_heads;
  const int64_t inter = m_.intermediate_size;
  std::vector<float> x(w_.embed.begin() + token * h, w_.embed.begin() + (token + 1) * h);
  for (int64_t l = 0; l < m_.num_layers; ++l) {
    const LayerWeights& w = w_.layers[l];
    const auto xn = Norm(x, w.attn_norm, m_.rms_norm_eps);
    auto q = MatVec(w.wqkv, xn, nh * hd, h, 0);
    auto k = MatVec(w.wqkv, xn, nkv * hd, h, nh * hd);
    auto v = MatVec(w.wqkv, xn, nkv * hd, h, (nh + nkv) * hd);
    for (int64_t i = 0; i < nh; ++i) Rotate(&q[i * hd], hd, pos_, m_.rope.theta);
    for (int64_t i = 0; i < nkv; ++i) Rotate(&k[i * hd], hd, pos_, m_.rope.theta);
    k_[l].insert(k_[l].end(), k.begin(), k.end());
    v_[l].insert(v_[l].end(), v.begin(), v.end());
    const int64_t window = m_.layers[l].kind == LayerKind::kSlidingAttention ? m_.layers[l].sliding_window : 0;
    const int64_t from = window > 0 ? std::max<int64_t>(0, pos_ - window + 1) : 0;
    std::vector<float> att(static_cast<size_t>(nh * hd), 0.0f);
    for (int64_t head = 0; head < nh; ++head) {
      const int64_t g = head / (nh / nkv);
      std::vector<double> s;
      double mx = -1e300;
      for (int64_t j = from; j <= pos_; ++j) {
        double d = 0;
        for (int64_t e = 0; e < hd; ++e) d += static_cast<double>(q[head * hd + e]) * k_[l][(j * nkv + g) * hd + e];
        s.push_back(d / std::sqrt(static_cast<double>(hd)));
        mx = std::max(mx, s.back());
      }
      double sum = 0;
      for (double& e : s) sum += (e = std::exp(e - mx));
      for (int64_t j = from; j <= pos_; ++j) {
        const double p = s[j - from] / sum;
        for (int64_t e = 0; e < hd; ++e) att[head * hd + e] += static_cast<float>(p * v_[l][(j * nkv + g) * hd + e]);
      }
    }
    const auto o = MatVec(w.wo, att, h, nh * hd);
    for (int64_t i = 0; i < h; ++i) x[i] += o[i];
    const auto xn2 = Norm(x, w.mlp_norm, m_.rms_norm_eps);
    const auto gate = MatVec(w.w_gate_up, xn2, inter, h, 0);
    const auto up = MatVec(w.w_gate_up, xn2, inter, h, inter);
    std::vector<float> a(static_cast<size_t>(inter));
    for (int64_t i = 0; i < inter; ++i) a[i] = gate[i] / (1.0f + std::exp(-gate[i])) * up[i];
    const auto d = MatVec(w.w_down, a, h, inter);
    for (int64_t i = 0; i < h; ++i) x[i] += d[i];
  }
  ++pos_;
  return MatVec(m_.tie_word_embeddings ? w_.embed : w_.lm_head, Norm(x, w_.final_norm, m_.rms_norm_eps), m_.vocab_size,
                h);
}

}  // namespace goodput::cpu
