// One request as a measurement sees it, and the per-request metrics of
// docs/metrics.md computed from it. The load generator and the simulator both
// produce these records; everything downstream (SLO, goodput, reports) reads
// only them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace goodput {

// A token-carrying chunk of a streamed response: when it arrived and how many
// generated tokens it carried (content or reasoning; never an empty role-only
// chunk).
struct TokenChunk {
  double t = 0;
  int32_t tokens = 1;
};

struct RequestRecord {
  std::string request_class;      // e.g. "interactive"; "" means the default class
  double t_arrival = 0;           // scheduled (open loop) or send time (closed loop), seconds
  double t_sent = 0;              // when the client actually sent it
  bool first_wave = false;        // a closed-loop client's first request: warm-up, never measured
  std::optional<double> t_first;  // first token-carrying chunk
  std::optional<double> t_last;   // last token-carrying chunk
  int64_t n_in = 0;               // prompt tokens
  int64_t n_out = 0;              // output tokens: the server's usage when given, else counted
  bool ok = true;                 // false: failed, timed out or truncated
  std::string error;              // why, when !ok
  std::string note;               // something a reader of the figures should know (e.g. no usage chunk)
  std::vector<TokenChunk> chunks; // optional; needed only for ITL
};

// TTFT = t_first - t_arrival. Empty when no token arrived.
std::optional<double> Ttft(const RequestRecord& r);

// TPOT = (t_last - t_first) / (n_out - 1), defined only for n_out >= 2.
std::optional<double> Tpot(const RequestRecord& r);

// E2E = t_last - t_arrival. Empty when no token arrived.
std::optional<double> E2e(const RequestRecord& r);

// send_lag = t_sent - t_arrival: how late the client itself was.
double SendLag(const RequestRecord& r);

// Inter-token latencies: the gap between consecutive token-carrying chunks; a
// chunk with k tokens contributes gap / k, k times. Empty without chunks.
std::vector<double> Itls(const RequestRecord& r);
// The same appended to `out` (a point's millions of them, without a vector a request).
void AppendItls(const RequestRecord& r, std::vector<double>& out);

// Spreads `n_out` tokens evenly over `chunks` in order (chunk i gets
// floor((i+1)n/k) - floor(in/k)), for a stream whose chunks carried several
// tokens each and whose count came only at its end. No-op without chunks.
void SpreadTokensOverChunks(std::vector<TokenChunk>& chunks, int64_t n_out);

// Chunks as text, "t:n t:n ..." (times with every bit: %.17g), for storage;
// and back, where text that is not that reads as no chunks.
std::string ChunksToText(const std::vector<TokenChunk>& chunks);
std::vector<TokenChunk> ChunksFromText(const std::string& text);

// Output tokens `r` delivered in [start, end): its chunks' tokens by their
// times; without chunks, n_out tokens spread evenly from t_first to t_last.
double TokensServedIn(const RequestRecord& r, double start, double end);

}  // namespace goodput
