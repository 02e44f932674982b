// The metric and SLO definitions of docs/metrics.md as people read them, written
// once: printed by every measuring command's --help and in reports (peers
// disagree on what TPOT and ITL mean, so ours are spelled out). The code that
// computes them is core/request_record.h and core/slo.h.
#pragma once

namespace goodput {

// Lines of at most 90 characters, each ending in a newline; the first is
// "Definitions (docs/metrics.md):".
extern const char* const kMetricDefinitions;

}  // namespace goodput
