#!/usr/bin/env bash
# The slo policy on the real CPU engine: while an interactive stream decodes,
# a 1,500-token offline prompt arrives. Under `priority` the whole prefill
# joins one step and the stream stalls for seconds; under `slo` (TPOT target
# 150 ms) the server's measured step-time line admits only the offline tokens
# that keep each step within the target, so the stream's worst gap stays
# short. Usage: slo_e2e.sh GOODPUT_BINARY
set -u
bin="$1"
here="$(cd "$(dirname "$0")" && pwd)"
work="$(mktemp -d)"
source "$here/listening_port.sh"
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$work"' EXIT
long_prompt=$(head -c 1500 /dev/zero | tr '\0' 'a')

# Prints the interactive stream's worst inter-token gap (ms) under policy $1.
worst_gap_ms() {
  "$bin" serve --model goodput-small --port 0 --kv-cache-memory 256MiB --max-num-batched-tokens 2048 \
    --scheduling-policy "$1" --slo-tpot 150ms 2> "$work/serve-$1.err" &
  local pid=$!
  local port
  if ! port=$(listening_port "$work/serve-$1.err" "$pid"); then
    echo "goodput serve ($1) did not start: $(cat "$work/serve-$1.err")" >&2
    echo 0
    return
  fi
  node "$here/stream_gaps.mjs" "http://127.0.0.1:$port" \
    '{"model":"goodput-small","prompt":"hello","max_tokens":80,"ignore_eos":true,"stream":true}' > "$work/gap-$1" &
  local client=$!
  sleep 0.3
  curl -s -o /dev/null -H "x-goodput-class: offline" -H "content-type: application/json" \
    "http://127.0.0.1:$port/v1/completions" \
    -d "{\"model\":\"goodput-small\",\"prompt\":\"$long_prompt\",\"max_tokens\":1}"
  wait "$client"
  kill -TERM "$pid"
  wait "$pid" 2>/dev/null
  cut -d' ' -f1 "$work/gap-$1"
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
