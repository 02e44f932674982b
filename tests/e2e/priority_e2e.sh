#!/usr/bin/env bash
# Class behaviour under load: with two seats (max-num-seqs 2) taken by long
# offline streams, an interactive request waits for them under fcfs but gets
# a seat at once under the priority policy (the newest offline request is
# sent back to wait). Usage: priority_e2e.sh GOODPUT_BINARY
set -u
bin="$1"
work="$(mktemp -d)"
source "$(dirname "$0")/listening_port.sh"
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$work"' EXIT

# Prints the seconds an interactive 8-token request takes while 4 offline
# 3000-token streams hold the engine, under scheduling policy $1.
interactive_seconds() {
  "$bin" serve --model goodput-tiny --port 0 --kv-cache-memory 64MiB --max-num-seqs 2 \
    --scheduling-policy "$1" 2> "$work/serve-$1.err" &
  local pid=$!
  local port
  if ! port=$(listening_port "$work/serve-$1.err" "$pid"); then
    echo "goodput serve ($1) did not start: $(cat "$work/serve-$1.err")" >&2
    echo 0
    return
  fi
  for i in 1 2 3 4; do
    curl -s -N -m 30 -H "x-goodput-class: offline" -H "content-type: application/json" \
      "http://127.0.0.1:$port/v1/completions" \
      -d '{"model":"goodput-tiny","prompt":"batch job","max_tokens":3000,"ignore_eos":true,"stream":true}' > /dev/null &
  done
  sleep 0.5
  curl -s -o /dev/null -w '%{time_total}' -H "content-type: application/json" "http://127.0.0.1:$port/v1/completions" \
    -d '{"model":"goodput-tiny","prompt":"hello","max_tokens":8,"ignore_eos":true}'
  kill -TERM "$pid"
  wait "$pid" 2>/dev/null
}

fcfs=$(interactive_seconds fcfs)
priority=$(interactive_seconds priority)
echo "interactive request under load: fcfs ${fcfs}s, priority ${priority}s"
if awk -v f="$fcfs" -v p="$priority" 'BEGIN { exit !(p < 1.0 && f > 2 * p) }'; then
  echo "1 passed, 0 failed"
else
  echo "0 passed, 1 failed"
  exit 1
fi
