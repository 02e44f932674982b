// The physical paged KV cache of the CPU runner. Blocks are the
// KvCacheManager's block ids; as in vLLM, one storage slot is shared by one
// layer of each layer group (their block ids never overlap). K and V are kept
// as fp32, bf16, fp8 e4m3 or int8; the 8-bit formats carry one fp32 scale per
// token and KV head (absmax / 448 or / 127).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"
#include "model/dtype.h"

namespace goodput::cpu {

enum class KvFormat { kFp32, kBf16, kFp8, kInt8 };
// --kv-cache-dtype: fp32 | bf16 | fp8 (e4m3) | int8, or auto: the model's
// dtype (fp32 for fp32 models, else bf16: the CPU pool has no fp16 format).
Result<KvFormat> KvFormatFor(const std::string& name, DType model_dtype);
const char* KvFormatName(KvFormat f);
int KvElementBytes(KvFormat f);
bool KvHasScales(KvFormat f);

class KvStore {
 public:
  // `layer_slot[l]` is the storage slot of layer l (0 .. num_slots - 1).
  KvStore(KvFormat format, int64_t num_blocks, int64_t block_size, int64_t kv_heads, int64_t head_dim,
          std::vector<int> layer_slot, int num_slots);

  // Bytes of one block of one slot (K and V, with scales).
  static int64_t BlockBytes(KvFormat format, int64_t block_size, int64_t kv_heads, int64_t head_dim);

  // Stores the K and V of one token (kv_heads x head_dim floats each).
  void Write(int layer, int32_t block, int64_t offset, const float* k, const float* v);

  // Reads one KV head of one token back as floats.
  void ReadK(int layer, int32_t block, int64_t offset, int64_t head, float* out) const;
  void ReadV(int layer, int32_t block, int64_t offset, int64_t head, float* out) const;

  int64_t block_size() const { return block_size_; }
  int64_t num_blocks() const { return num_blocks_; }
  KvFormat format() const { return format_; }

 private:
  int64_t ElementIndex(int32_t block, int64_t offset, int64_t head) const;  // of the head's first element
  void Store(uint8_t* dst, float* scale, const float* src) const;
  void Load(const uint8_t* src, float scale, float* out) const;

  KvFormat format_;
  int64_t num_blocks_, block_size_, kv_heads_, head_dim_;
  std::vector<int> layer_slot_;
  std::vector<std::vector<uint8_t>> k_, v_;       // per slot
  std::vector<std::vector<float>> k_scale_, v_scale_;
};

}  // namespace goodput::cpu
