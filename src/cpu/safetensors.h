// Reading and writing Hugging Face safetensors files: an 8-byte little-endian
// header length, a JSON header naming each tensor's dtype, shape and byte
// range, then the data. Tensors are converted to float32 (F32, BF16, F16).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/status.h"

namespace goodput::cpu {

struct Tensor {
  std::vector<int64_t> shape;
  std::vector<float> data;
  int64_t numel() const;
};

// All tensors of one file, by name.
Result<std::map<std::string, Tensor>> ReadSafetensors(const std::string& path);

// All tensors of every *.safetensors file in `dir` (sharded checkpoints).
Result<std::map<std::string, Tensor>> ReadSafetensorsDir(const std::string& dir);

// Writes tensors as `dtype` ("F32" or "BF16"); used to make test checkpoints.
Status WriteSafetensors(const std::string& path, const std::map<std::string, Tensor>& tensors,
                        const std::string& dtype = "F32");

}  // namespace goodput::cpu
