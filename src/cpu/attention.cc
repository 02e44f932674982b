#include "cpu/attention.h"

#include <algorithm>
#include <cmath>

#include "cpu/kernels.h"
#include "cpu/panel_matmul.h"

namespace goodput::cpu {

namespace {

float* Sized(std::vector<float>& v, int64_t n) {
  if (static_cast<int64_t>(v.size()) < n) v.resize(static_cast<size_t>(n));
  return v.data();
}

// KV head g's keys (transposed, [hd x padded]) and values ([padded x hd]) for
// context positions [lo, lo + ctx), the padding zeros.
void GatherHead(const KvStore& kv, int layer, const ChunkView& c, int64_t g, int64_t hd, int64_t lo, int64_t ctx,
                int64_t padded, AttentionScratch& scratch) {
  float* kt = scratch.k.data();
  float* v = scratch.v.data();
  float* k_row = Sized(scratch.k_row, hd);
  const int64_t bs = kv.block_size();
  for (int64_t j = 0; j < ctx; ++j) {
    const int64_t pos = lo + j;
    const int32_t block = (*c.blocks)[pos / bs];
    kv.ReadK(layer, block, pos % bs, g, k_row);
    for (int64_t d = 0; d < hd; ++d) kt[d * padded + j] = k_row[d];
    kv.ReadV(layer, block, pos % bs, g, &v[j * hd]);
  }
  for (int64_t d = 0; d < hd; ++d) std::fill(kt + d * padded + ctx, kt + (d + 1) * padded, 0.0f);
  std::fill(v + ctx * hd, v + padded * hd, 0.0f);
}

}  // namespace

void PagedAttention(const KvStore& kv, int layer, const AttentionShape& s, const ChunkView& c, const float* q,
                    float* out, AttentionScratch& scratch, int64_t kv_head_begin, int64_t kv_head_end) {
  const int64_t hd = s.head_dim, group = s.heads / s.kv_heads, t = c.num_new;
  const int64_t first = c.num_computed;
  const int64_t lo = c.window > 0 ? std::max<int64_t>(0, first - c.window + 1) : 0;
  const int64_t hi = first + t - 1;
  const int64_t ctx = hi - lo + 1;
  // The context padded with zero keys and values to a multiple of 16: the
  // scores' rows are then whole vectors for PanelMatMul, and the padding's
  // scores are zeros.
  const int64_t padded = (ctx + 15) / 16 * 16;
  const float scale = 1.0f / std::sqrt(static_cast<float>(hd));
  float* kt = Sized(scratch.k, hd * padded);  // keys transposed: [hd x padded]
  float* v = Sized(scratch.v, padded * hd);
  float* qg = Sized(scratch.qg, t * group * hd);
  float* scores = Sized(scratch.scores, t * group * padded);
  float* o = Sized(scratch.o, t * group * hd);
  const int64_t end = kv_head_end < 0 ? s.kv_heads : kv_head_end;
  for (int64_t g = kv_head_begin; g < end; ++g) {
    GatherHead(kv, layer, c, g, hd, lo, ctx, padded, scratch);
    for (int64_t i = 0; i < t; ++i) {  // rows (i, h) for the group's query heads, scaled
      for (int64_t h = 0; h < group; ++h) {
        const float* src = q + i * s.heads * hd + (g * group + h) * hd;
        std::transform(src, src + hd, &qg[(i * group + h) * hd], [scale](float x) { return x * scale; });
      }
    }
    const int64_t rows = t * group;
    PanelMatMul(qg, kt, scores, rows, padded, hd, scratch.panel);
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t pos = first + r / group;  // the query's position
      const int64_t from = (c.window > 0 ? std::max(lo, pos - c.window + 1) : lo) - lo;
      const int64_t to = pos - lo;  // inclusive
      float* row = &scores[r * padded];
      std::fill(row, row + from, 0.0f);
      Softmax(row + from, to - from + 1);
      std::fill(row + to + 1, row + padded, 0.0f);
    }
    PanelMatMul(scores, v, o, rows, hd, padded, scratch.panel);
    for (int64_t i = 0; i < t; ++i) {
      for (int64_t h = 0; h < group; ++h) {
        const float* src = &o[(i * group + h) * hd];
        std::copy(src, src + hd, out + i * s.heads * hd + (g * group + h) * hd);
      }
    }
  }
}

}  // namespace goodput::cpu
