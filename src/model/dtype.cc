#include "model/dtype.h"

#include <fmt/format.h>

namespace goodput {

int DTypeBytes(DType t) {
  switch (t) {
    case DType::kFloat32: return 4;
    case DType::kBFloat16:
    case DType::kFloat16: return 2;
    case DType::kFp8E4M3:
    case DType::kFp8E5M2:
    case DType::kInt8: return 1;
  }
  return 0;
}

const char* DTypeName(DType t) {
  switch (t) {
    case DType::kFloat32: return "fp32";
    case DType::kBFloat16: return "bf16";
    case DType::kFloat16: return "fp16";
    case DType::kFp8E4M3: return "fp8_e4m3";
    case DType::kFp8E5M2: return "fp8_e5m2";
    case DType::kInt8: return "int8";
  }
  return "?";
}

Result<DType> ParseDType(std::string_view name) {
  if (name == "float32" || name == "float" || name == "fp32") return DType::kFloat32;
  if (name == "bfloat16" || name == "bf16") return DType::kBFloat16;
  if (name == "float16" || name == "half" || name == "fp16") return DType::kFloat16;
  if (name == "fp8" || name == "fp8_e4m3" || name == "float8_e4m3fn") return DType::kFp8E4M3;
  if (name == "fp8_e5m2" || name == "float8_e5m2") return DType::kFp8E5M2;
  if (name == "int8") return DType::kInt8;
  return Status::InvalidArgument(
      fmt::format("unknown data type '{}' (use fp32, bf16, fp16, fp8, fp8_e5m2, int8)", name));
}

}  // namespace goodput
