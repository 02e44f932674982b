// libFuzzer target: the load generator's reading of a server's stream — the
// SSE parser fed in pieces of arbitrary sizes, then each event's data parsed
// as an OpenAI stream chunk. Bytes from a server are outside input: no
// crash, no read out of bounds (ASan and UBSan on), memory bounded by
// SseParser::kMaxLineBytes. Built by perf/fuzz.sh.
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "client/openai_stream.h"
#include "client/sse.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  // The first byte sets the piece size (1-256 bytes): an event may be split
  // anywhere, as reads split it.
  const size_t piece = size_t{data[0]} + 1;
  const std::string_view bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
  goodput::client::SseParser parser;
  std::vector<goodput::client::SseEvent> events;
  for (size_t at = 0; at < bytes.size() && !parser.too_long(); at += piece) {
    parser.Feed(bytes.substr(at, piece), events);
  }
  for (const auto& e : events) {
    if (e.data.size() > goodput::client::SseParser::kMaxLineBytes) __builtin_trap();
    auto chunk = goodput::client::ParseStreamChunk(e.data);
    if (chunk.ok() && chunk->tokens < 0) __builtin_trap();
  }
  return 0;
}
