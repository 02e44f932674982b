// Trace replay input: request arrivals recorded elsewhere.
//
// Formats, told apart by content:
//   CSV with a header naming a timestamp column and input/output length
//   columns, optional class. Recognised names (case-insensitive):
//     timestamp | time | arrival_time | arrived_at | TIMESTAMP (Azure LLM inference trace)
//     input_length | input_tokens | prompt_tokens | ContextTokens (Azure) |
//       Request tokens (BurstGPT) | num_prefill_tokens (Vidur's processed traces)
//     output_length | output_tokens | completion_tokens | GeneratedTokens (Azure) |
//       Response tokens (BurstGPT) | num_decode_tokens (Vidur)
//     class
//   Numeric timestamps are seconds; Azure's "2023-11-16 18:15:46.6805900"
//   date-times are read as such.
//   JSONL in Mooncake's layout: {"timestamp": <ms>, "input_length": N,
//   "output_length": N, "hash_ids": [...]} per line (hash_ids optional;
//   other fields ignored; an optional "class" is kept).
// Timestamps must not decrease and span at most a year (kMaxTraceSpanSeconds:
// published traces span days to months); arrivals are rebased so the first is
// at 0. A length over kMaxTokenLength is an error.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"

namespace goodput {

// The longest a trace may span: a year (a larger span is a typo, and a
// replay against a server would wait it out).
constexpr double kMaxTraceSpanSeconds = 366.0 * 24 * 3600;

struct TraceRow {
  double t = 0;  // seconds since the first arrival
  int64_t input_tokens = 0;
  int64_t output_tokens = 0;
  std::string request_class;  // empty when the trace has none
  // Mooncake's "hash_ids": one id per 512-token block of the prompt, equal
  // where two prompts share that block and everything before it; empty
  // when the trace has none.
  std::vector<int64_t> block_hashes;
};
constexpr int64_t kMooncakeBlockTokens = 512;

// Reads a trace file; errors name the file and line. A request with a zero
// input or output length is an error, unless `skip_empty`: then it is left
// out and counted in `skipped` (BurstGPT records failed requests with 0
// response tokens). A CSV without a timestamp column (a dataset's lengths,
// not a trace) is an error, unless `untimed` is given: then its rows all
// arrive at 0 and *untimed is set.
Result<std::vector<TraceRow>> ReadTrace(const std::string& path, bool skip_empty = false, int64_t* skipped = nullptr,
                                        bool* untimed = nullptr);

}  // namespace goodput
