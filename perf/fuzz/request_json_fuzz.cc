// libFuzzer target: goodput serve's request parser (the body of a
// /v1/completions or /v1/chat/completions POST, and the class header) on
// arbitrary bytes. It must answer every input with a request or an
// ApiError, never crash, hang or read out of bounds (ASan and UBSan on).
// Built by perf/fuzz.sh.
#include <cstddef>
#include <cstdint>
#include <string>

#include "server/openai_request.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  // The first byte picks the schema and a class header; the rest is the body.
  const bool chat = data[0] & 1;
  const std::string header = (data[0] & 2) ? "offline" : "";
  const std::string body(reinterpret_cast<const char*>(data) + 1, size - 1);
  auto parsed = goodput::server::ParseGenerationRequest(body, chat, header);
  if (auto* error = std::get_if<goodput::server::ApiError>(&parsed)) {
    if (error->message.empty()) __builtin_trap();  // every refusal says why
  }
  return 0;
}
