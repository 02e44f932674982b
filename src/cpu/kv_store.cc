#include "cpu/kv_store.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include <fmt/format.h>

#include "cpu/kernels.h"

namespace goodput::cpu {

Result<KvFormat> KvFormatFor(const std::string& name, DType model_dtype) {
  if (name == "auto") return model_dtype == DType::kFloat32 ? KvFormat::kFp32 : KvFormat::kBf16;
  if (name == "fp32" || name == "float32") return KvFormat::kFp32;
  if (name == "bf16" || name == "bfloat16") return KvFormat::kBf16;
  if (name == "fp8" || name == "fp8_e4m3") return KvFormat::kFp8;
  if (name == "int8") return KvFormat::kInt8;
  return Status::InvalidArgument(fmt::format("unknown KV cache dtype '{}' (auto, fp32, bf16, fp8, int8)", name));
}

const char* KvFormatName(KvFormat f) {
  switch (f) {
    case KvFormat::kFp32: return "fp32";
    case KvFormat::kBf16: return "bf16";
    case KvFormat::kFp8: return "fp8_e4m3";
    case KvFormat::kInt8: return "int8";
  }
  return "?";
}

int KvElementBytes(KvFormat f) { return f == KvFormat::kFp32 ? 4 : f == KvFormat::kBf16 ? 2 : 1; }
bool KvHasScales(KvFormat f) { return f == KvFormat::kFp8 || f == KvFormat::kInt8; }

int64_t KvStore::BlockBytes(KvFormat format, int64_t block_size, int64_t kv_heads, int64_t head_dim) {
  const int64_t values = 2 * block_size * kv_heads * head_dim * KvElementBytes(format);
  return values + (KvHasScales(format) ? 2 * block_size * kv_heads * 4 : 0);
}

KvStore::KvStore(KvFormat format, int64_t num_blocks, int64_t block_size, int64_t kv_heads, int64_t head_dim,
                 std::vector<int> layer_slot, int num_slots)
    : format_(format),
      num_blocks_(num_blocks),
      block_size_(block_size),
      kv_heads_(kv_heads),
      head_dim_(head_dim),
      layer_slot_(std::move(layer_slot)) {
  const size_t elems = static_cast<size_t>(num_blocks * block_size * kv_heads * head_dim);
  const size_t scales = KvHasScales(format) ? static_cast<size_t>(num_blocks * block_size * kv_heads) : 0;
  for (int s = 0; s < num_slots; ++s) {
    k_.emplace_back(elems * KvElementBytes(format));
    v_.emplace_back(elems * KvElementBytes(format));
    k_scale_.emplace_back(scales);
    v_scale_.emplace_back(scales);
  }
}

int64_t KvStore::ElementIndex(int32_t block, int64_t offset, int64_t head) const {
  return ((static_cast<int64_t>(block) * block_size_ + offset) * kv_heads_ + head) * head_dim_;
}

void KvStore::Store(uint8_t* dst, float* scale, const float* src) const {
  switch (format_) {
    case KvFormat::kFp32: std::memcpy(dst, src, head_dim_ * 4); return;
    case KvFormat::kBf16:
      for (int64_t i = 0; i < head_dim_; ++i) {
        const uint16_t b = FloatToBf16(src[i]);
        std::memcpy(dst + 2 * i, &b, 2);
      }
      return;
    case KvFormat::kFp8:
    case KvFormat::kInt8: {
      float amax = 0;
      for (int64_t i = 0; i < head_dim_; ++i) amax = std::max(amax, std::fabs(src[i]));
      const float limit = format_ == KvFormat::kFp8 ? kFp8E4M3Max : 127.0f;
      *scale = amax > 0 ? amax / limit : 1.0f;
      for (int64_t i = 0; i < head_dim_; ++i) {
        const float x = src[i] / *scale;
        dst[i] = format_ == KvFormat::kFp8
                     ? FloatToFp8E4M3(x)
                     : static_cast<uint8_t>(static_cast<int8_t>(std::lround(std::clamp(x, -127.0f, 127.0f))));
      }
      return;
    }
  }
}

void KvStore::Load(const uint8_t* src, float scale, float* out) const {
  switch (format_) {
    case KvFormat::kFp32: std::memcpy(out, src, head_dim_ * 4); return;
    case KvFormat::kBf16:
      for (int64_t i = 0; i < head_dim_; ++i) {
        uint16_t b;
        std::memcpy(&b, src + 2 * i, 2);
        out[i] = Bf16ToFloat(b);
      }
      return;
    case KvFormat::kFp8:
      for (int64_t i = 0; i < head_dim_; ++i) out[i] = Fp8E4M3ToFloat(src[i]) * scale;
      return;
    case KvFormat::kInt8:
      for (int64_t i = 0; i < head_dim_; ++i) out[i] = static_cast<float>(static_cast<int8_t>(src[i])) * scale;
      return;
  }
}

void KvStore::Write(int layer, int32_t block, int64_t offset, const float* k, const float* v) {
  const int s = layer_slot_[layer];
  const int elem = KvElementBytes(format_);
  for (int64_t h = 0; h < kv_heads_; ++h) {
    const int64_t e = ElementIndex(block, offset, h);
    const int64_t si = (static_cast<int64_t>(block) * block_size_ + offset) * kv_heads_ + h;
    float* ks = KvHasScales(format_) ? &k_scale_[s][si] : nullptr;
    float* vs = KvHasScales(format_) ? &v_scale_[s][si] : nullptr;
    Store(&k_[s][e * elem], ks, k + h * head_dim_);
    Store(&v_[s][e * elem], vs, v + h * head_dim_);
  }
}

void KvStore::ReadK(int layer, int32_t block, int64_t offset, int64_t head, float* out) const {
  const int s = layer_slot_[layer];
  const int64_t si = (static_cast<int64_t>(block) * block_size_ + offset) * kv_heads_ + head;
  Load(&k_[s][ElementIndex(block, offset, head) * KvElementBytes(format_)],
       KvHasScales(format_) ? k_scale_[s][si] : 1.0f, out);
}

void KvStore::ReadV(int layer, int32_t block, int64_t offset, int64_t head, float* out) const {
  const int s = layer_slot_[layer];
  const int64_t si = (static_cast<int64_t>(block) * block_size_ + offset) * kv_heads_ + head;
  Load(&v_[s][ElementIndex(block, offset, head) * KvElementBytes(format_)],
       KvHasScales(format_) ? v_scale_[s][si] : 1.0f, out);
}

}  // namespace goodput::cpu
