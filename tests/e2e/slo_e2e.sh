#!/usr/bin/env bash
# The slo policy on the real CPU engine: while an interactive stream decodes,
# a 1,500-token offline prompt arrives. Under `priority` the whole prefill
# joins one step and the stream stalls for seconds; under `slo` (TPOT target
# 150 ms) the server's step-time predictor (the cost model fitted at start-up, scaled by the
# steps it sees) admits only the offline tokens that keep each step within
# the target, so the stream's worst gap stays short. Both policies run in the
# same test, on the same machine as loaded then, and are compared with each
# other: priority's worst gap must exceed twice slo's. The margin comes from
# perf/slo_vs_priority.sh: over 3 rounds in each of idle, busy-before-start
# and busy-after-start, a policy's worst gap moved at most 14% between rounds
# while priority's exceeded slo's 27-37 times; 600 ms (4x the target) bounds
# slo's own gap, which reached 182 ms with a core taken.
# Usage: slo_e2e.sh GOODPUT_BINARY
set -u
bin="$1"
here="$(cd "$(dirname "$0")" && pwd)"
work="$(mktemp -d)"
source "$here/slo_scenario.sh"
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$work"' EXIT

# Prints the interactive stream's worst inter-token gap (ms) under policy $1.
worst_gap_ms() {
  local line
  line=$(slo_scenario "$bin" "$1" "$work") || { echo 0; return; }
  echo "$line" | cut -d' ' -f1
}

priority=$(worst_gap_ms priority)
slo=$(worst_gap_ms slo)
grep "step time" "$work/serve-slo.err"
echo "worst inter-token gap of the interactive stream: priority ${priority} ms, slo ${slo} ms (target 150 ms)"
if awk -v p="$priority" -v s="$slo" 'BEGIN { exit !(s > 0 && s < 600 && p > 2 * s) }'; then
  echo "1 passed, 0 failed"
else
  echo "0 passed, 1 failed"
  cat "$work"/serve-*.err
  exit 1
fi
