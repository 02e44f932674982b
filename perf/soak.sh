#!/usr/bin/env bash
# A soak of goodput serve at its capacity: goodput-small with the demo's KV
# pool under chat-cpu.yaml at CONCURRENCY clients (16: the demo's capacity on
# a 2-core machine), measured run after run by goodput bench until MINUTES
# have passed. The server's resident memory is sampled every 30 s. Passes
# when no request failed, the server holds no request or KV block at the end,
# and its memory after the first runs stays within 5% (the first runs warm
# the allocator and OpenBLAS's buffers; the baseline is the sample at 3 min).
# Usage: perf/soak.sh GOODPUT_BINARY [MINUTES (30)] [CONCURRENCY (16)]
set -u
bin="$1"
minutes="${2:-30}"
clients="${3:-16}"
here="$(cd "$(dirname "$0")" && pwd)"
data="$here/../data"
work="$(mktemp -d)"
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$work"' EXIT
source "$here/../tests/e2e/listening_port.sh"

start_serve "$bin" "$work/serve.err" --model goodput-small --kv-cache-memory 512MiB || exit 2
pid=$serve_pid
url=$serve_url
start=$(date +%s)
(while kill -0 "$pid" 2> /dev/null; do
  echo "$(( $(date +%s) - start )) $(awk '/^VmRSS/ { print $2 }' "/proc/$pid/status")" >> "$work/rss"
  sleep 30
done) &

runs=0 requests=0 failed=0 holds=0
while [ $(( $(date +%s) - start )) -lt $((minutes * 60)) ]; do
  "$bin" bench --target "$url" --model goodput-small --workload "$data/workloads/chat-cpu.yaml" \
    --concurrency "$clients" --requests 128 --repeat 1 --no-ledger --json > "$work/run.json" 2> "$work/run.err" ||
    { echo "goodput bench failed: $(tail -3 "$work/run.err")"; failed=$((failed + 1)); }
  runs=$((runs + 1))
  requests=$((requests + 128))
  f=$(grep -o '"failed":[0-9.]*' "$work/run.json" | head -1 | cut -d: -f2)
  failed=$(echo "$failed + ${f:-0}" | bc)
  grep -q '"verdict":"holds"' "$work/run.json" && holds=$((holds + 1))
  echo "$(( ($(date +%s) - start) / 60 )) min: run $runs, failed so far $failed" >&2
done
sleep 1
running=$(serve_metric vllm:num_requests_running)
kv=$(serve_metric vllm:kv_cache_usage_perc)
kill -TERM "$pid"
wait "$pid" 2> /dev/null
sleep 0.2

echo "soak: goodput serve (goodput-small, --kv-cache-memory 512MiB), chat-cpu.yaml at $clients clients," \
  "$(( ($(date +%s) - start) / 60 )) min"
echo "  runs $runs, requests $requests, failed $failed; SLO held in $holds of $runs runs"
echo "  after the last run: running $running, KV usage $kv"
echo "  resident memory (MiB) by minute:"
awk '$1 % 300 < 30 { printf "    %3d min  %7.1f\n", $1 / 60, $2 / 1024 }' "$work/rss"
verdict=$(awk '$1 >= 180 && !base { base = $2 } { last = $2; if ($1 >= 180 && $2 > peak) peak = $2 }
  END { if (!base) { print "too short to judge"; exit }
        printf "  from 3 min on: %.1f MiB at 3 min, %.1f at the end (%+.1f%%), peak %.1f (%+.1f%%)\n",
               base / 1024, last / 1024, 100 * (last - base) / base, peak / 1024, 100 * (peak - base) / base
        exit (peak - base) / base > 0.05 }' "$work/rss")
flat=$?
echo "$verdict"
[ "$failed" = 0 ] && [ "$running" = 0 ] && [ "$kv" = 0 ] && [ "$flat" = 0 ] && { echo "passed"; exit 0; }
echo "FAILED"
exit 1
