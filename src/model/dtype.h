// Element types of weights, KV cache and recurrent state.
#pragma once

#include <string>
#include <string_view>

#include "core/status.h"

namespace goodput {

enum class DType { kFloat32, kBFloat16, kFloat16, kFp8E4M3, kFp8E5M2, kInt8 };

// Bytes per element.
int DTypeBytes(DType t);

// Canonical short name: "fp32", "bf16", "fp16", "fp8_e4m3", "fp8_e5m2", "int8".
const char* DTypeName(DType t);

// Accepts torch and vLLM spellings: "float32"/"float"/"fp32", "bfloat16"/"bf16",
// "float16"/"half"/"fp16", "fp8"/"fp8_e4m3", "fp8_e5m2", "int8".
Result<DType> ParseDType(std::string_view name);

}  // namespace goodput
