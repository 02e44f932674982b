#include "cpu/attention.h"

#include <cblas.h>

#include <algorithm>
#include <cmath>

#include "cpu/kernels.h"

namespace goodput::cpu {

namespace {

float* Sized(std::vector<float>& v, int64_t n) {
  if (static_cast<int64_t>(v.size()) < n) v.resize(static_cast<size_t>(n));
  return v.data();
}

}  // namespace

void PagedAttention(const KvStore& kv, int layer, const AttentionShape& s, const ChunkView& c, const float* q,
                    float* out, AttentionScratch& scratch, int64_t kv_head_begin, int64_t kv_head_end) {
  UseSingleThreadedBlas();  // the caller splits attention over threads
  const int64_t hd = s.head_dim, group = s.heads / s.kv_heads, t = c.num_new, bs = kv.block_size();
  const int64_t first = c.num_computed;
  const int64_t lo = c.window > 0 ? std::max<int64_t>(0, first - c.window + 1) : 0;
  const int64_t hi = first + t - 1;
  const int64_t ctx = hi - lo + 1;
  const float scale = 1.0f / std::sqrt(static_cast<float>(hd));
  float* k = Sized(scratch.k, ctx * hd);
  float* v = Sized(scratch.v, ctx * hd);
  float* qg = Sized(scratch.qg, t * group * hd);
  float* scores = Sized(scratch.scores, t * group * ctx);
  float* o = Sized(scratch.o, t * group * hd);
  const int64_t end = kv_head_end < 0 ? s.kv_heads : kv_head_end;
  for (int64_t g = kv_head_begin; g < end; ++g) {
    for (int64_t j = 0; j < ctx; ++j) {
      const int64_t pos = lo + j;
      const int32_t block = (*c.blocks)[pos / bs];
      kv.ReadK(layer, block, pos % bs, g, &k[j * hd]);
      kv.ReadV(layer, block, pos % bs, g, &v[j * hd]);
    }
    for (int64_t i = 0; i < t; ++i) {  // rows (i, h) for the group's query heads
      for (int64_t h = 0; h < group; ++h) {
        const float* src = q + i * s.heads * hd + (g * group + h) * hd;
        std::copy(src, src + hd, &qg[(i * group + h) * hd]);
      }
    }
    const int rows = static_cast<int>(t * group);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, rows, static_cast<int>(ctx), static_cast<int>(hd), scale,
                qg, static_cast<int>(hd), k, static_cast<int>(hd), 0.0f, scores, static_cast<int>(ctx));
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t pos = first + r / group;  // the query's position
      const int64_t from = (c.window > 0 ? std::max(lo, pos - c.window + 1) : lo) - lo;
      const int64_t to = pos - lo;  // inclusive
      float* row = &scores[r * ctx];
      std::fill(row, row + from, 0.0f);
      Softmax(row + from, to - from + 1);
      std::fill(row + to + 1, row + ctx, 0.0f);
    }
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, rows, static_cast<int>(hd), static_cast<int>(ctx), 1.0f,
                scores, static_cast<int>(ctx), v, static_cast<int>(hd), 0.0f, o, static_cast<int>(hd));
    for (int64_t i = 0; i < t; ++i) {
      for (int64_t h = 0; h < group; ++h) {
        const float* src = &o[(i * group + h) * hd];
        std::copy(src, src + hd, out + i * s.heads * hd + (g * group + h) * hd);
      }
    }
  }
}

}  // namespace goodput::cpu
