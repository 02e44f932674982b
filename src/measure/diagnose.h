// What a load ladder's figures say about the measurement itself, and the
// max_num_seqs advice: the notes printed beside `bench`/`sweep`/`capacity`
// tables.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "measure/point.h"
#include "workload/workload.h"

namespace goodput {

// The source's warnings, one line each, merged across loads that say the
// same: failures, the requests' own notes (no usage chunk, no [DONE]), an
// open-loop load served below 90% of its rate (not sustainable), client send lag above `lag_threshold_s` (the point is
// not trustworthy), usage disagreeing with counted chunks, throughput rising while goodput falls (past the knee),
// per-token time and TTFT both flat while closed-loop concurrency rises 8x or more (measuring overhead, not the
// engine); per-token time and throughput both flat while concurrency rises 4x
// or more and TTFT at least doubles (a concurrency cap queueing requests);
// other processes taking over kBusyHostShare of the host's CPU (a busy host).
std::vector<std::string> Diagnose(const std::vector<PointResult>& points, double lag_threshold_s);

// N from a server's "GPU KV cache size: N tokens" start-up line.
std::optional<int64_t> KvTokensFromStartupLog(const std::string& startup);

// max_num_seqs two ways: what `kv_tokens` hold at the workload's p99 request
// length (the planner's view) and the measured closed-loop capacity; "" for
// an open-loop capacity.
std::string MaxNumSeqsAdvice(int64_t kv_tokens, const Workload& w, const PointResult& capacity);

}  // namespace goodput
