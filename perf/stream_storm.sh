#!/usr/bin/env bash
# 1,000 concurrent streams and a disconnect storm against goodput serve
# (goodput-tiny): half of the streams are dropped at once while others run
# and most still queue (perf/stream_storm.mjs). Then the server must be
# healthy, hold no request and no KV block, and answer a new request; the
# kept streams must all end with [DONE] and every token. Prints the figures
# and the server's memory before and after. Exits 1 on any failure.
# Usage: perf/stream_storm.sh GOODPUT_BINARY [STREAMS (1000)] [ROUNDS (3)]
set -u
bin="$1"
streams="${2:-1000}"
rounds="${3:-3}"
here="$(cd "$(dirname "$0")" && pwd)"
work="$(mktemp -d)"
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$work"' EXIT
source "$here/../tests/e2e/listening_port.sh"

start_serve "$bin" "$work/serve.err" --model goodput-tiny --kv-cache-memory 256MiB || exit 2
pid=$serve_pid
url=$serve_url
rss() { awk '/^VmRSS/ { print int($2 / 1024) }' "/proc/$pid/status"; }
echo "goodput serve (goodput-tiny, pid $pid): RSS $(rss) MiB at start"
status=0
for round in $(seq 1 "$rounds"); do
  line=$(node "$here/stream_storm.mjs" "$url" "$streams" $((streams / 2)) 1000 500)
  sleep 1
  running=$(serve_metric vllm:num_requests_running)
  waiting=$(serve_metric vllm:num_requests_waiting)
  kv=$(serve_metric vllm:kv_cache_usage_perc)
  after=$(curl -s -o /dev/null -w '%{http_code}' "$url/v1/completions" -H 'content-type: application/json' \
    -d '{"model":"goodput-tiny","prompt":"hi","max_tokens":4}')
  echo "round $round: $line; after: running $running, waiting $waiting, KV usage $kv, a new request $after," \
    "RSS $(rss) MiB"
  echo "$line" | grep -q "\"completed\":$((streams - streams / 2)),\"failed\":0," || status=1
  [ "$running" = 0 ] && [ "$waiting" = 0 ] && [ "$kv" = 0 ] && [ "$after" = 200 ] || status=1
done
kill -TERM "$pid"
wait "$pid"
echo "goodput serve exited $? after SIGTERM"
[ "$status" -eq 0 ] && echo "all rounds passed" || echo "FAILED"
exit "$status"
