#!/usr/bin/env bash
# Slow readers: a client that stops reading a 2,000-token chat stream for 5 s
# is dropped by a server with --timeout-write 2 (its stream ends without
# [DONE]) but kept by one with --timeout-write 30; a 0.3 s pause is harmless.
# Either way the server keeps serving and holds no request or KV block after.
# Usage: slow_reader_e2e.sh GOODPUT_BINARY
set -u
bin="$1"
here="$(cd "$(dirname "$0")" && pwd)"
work="$(mktemp -d)"
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$work"' EXIT
# With 20 top log-probabilities a token, the stream is ~3 MB: far more than
# the kernel's buffers between the two (the server's 16 KiB send buffer, the
# client's 128 KiB receive buffer), so a stalled reader stalls the server's
# writes however fast or slow the machine makes the tokens (2,000 tokens
# without them, 350 KB, once came through a 5 s stall whole on a busy machine).
body='{"model":"goodput-tiny","messages":[{"role":"user","content":"hi"}],"max_tokens":2000,"ignore_eos":true,'
body+='"stream":true,"logprobs":true,"top_logprobs":20}'
source "$(dirname "$0")/expect.sh"
source "$(dirname "$0")/listening_port.sh"

# run_case TIMEOUT PAUSE_MS -> prints "cut" or "done", then checks the server is idle and alive
run_case() {
  local err="$work/serve-$1-$2.err"
  "$bin" serve --model goodput-tiny --port 0 --kv-cache-memory 64MiB --timeout-write "$1" 2> "$err" &
  local pid=$!
  local port
  if ! port=$(listening_port "$err" "$pid"); then
    check "timeout $1 pause $2: goodput serve starts" "$(cat "$err")" ""
    echo none > "$work/result"
    return
  fi
  local result
  result=$(GOODPUT_PATH=/v1/chat/completions node "$here/slow_reader.mjs" "$port" "$body" "$2" | cut -d' ' -f2)
  sleep 0.2
  local metrics
  metrics=$(curl -s "http://127.0.0.1:$port/metrics")
  check "timeout $1 pause $2: nothing running after" \
    "$(echo "$metrics" | grep -c '^vllm:num_requests_running{.*} 0$')" 1
  check "timeout $1 pause $2: KV usage back to zero" \
    "$(echo "$metrics" | grep -c '^vllm:kv_cache_usage_perc{.*} 0$')" 1
  check "timeout $1 pause $2: still serving" "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/health")" 200
  kill -TERM "$pid"
  wait "$pid" 2>/dev/null
  echo "$result" > "$work/result"
}

run_case 2 5000; check "stalled 5 s, --timeout-write 2: dropped" "$(cat "$work/result")" cut
run_case 2 300; check "stalled 0.3 s, --timeout-write 2: complete" "$(cat "$work/result")" done
run_case 30 5000; check "stalled 5 s, --timeout-write 30: complete" "$(cat "$work/result")" done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] || { cat "$work"/serve-*.err; exit 1; }
