#!/usr/bin/env bash
# Fuzzes goodput's parsers of outside input with libFuzzer (clang, with
# AddressSanitizer and UBSan): goodput serve's request JSON, the load
# generator's SSE stream and stream-chunk JSON, and the workload YAML. Each
# target starts from a seed corpus of valid inputs and runs RUNS executions
# split over WORKERS processes; a crash, a leak, undefined behaviour, a
# timeout (10 s) or memory over 2 GiB fails it, and its input is kept in WORK.
# Prints one line per target: executions, time, rate and the result.
# Usage: perf/fuzz.sh [RUNS (10000000)] [WORKERS (2)] [WORK (a temporary directory)]
set -u
runs="${1:-10000000}"
workers="${2:-2}"
work="${3:-$(mktemp -d)}"
mkdir -p "$work"
root="$(cd "$(dirname "$0")/.." && pwd)"
build="$root/build-fuzz"
[ -f "$build/build.ninja" ] || cmake -S "$root" -B "$build" -G Ninja -DGOODPUT_FUZZ=ON \
  -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo > "$work/cmake.log" ||
  { cat "$work/cmake.log"; exit 2; }
cmake --build "$build" --target request_json_fuzz sse_fuzz workload_yaml_fuzz > "$work/build.log" ||
  { tail -30 "$work/build.log"; exit 2; }

# Seeds: valid inputs, so the fuzzer starts inside the formats.
mkdir -p "$work/request_json" "$work/sse" "$work/workload_yaml"
printf '\0{"model":"m","prompt":"hi","max_tokens":8,"stream":true,"stream_options":{"include_usage":true}}' \
  > "$work/request_json/completion"
printf '\1{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}],'\
'"max_tokens":4,"stop":["x"],"logprobs":true,"top_logprobs":2,"seed":1,"temperature":0.5}' > "$work/request_json/chat"
printf '\2{"model":"m","prompt":[1,2,3],"ignore_eos":true,"min_tokens":2,"priority":-1,"class":"c"}' \
  > "$work/request_json/ids"
printf '\7data: {"choices":[{"index":0,"text":"a","finish_reason":null}]}\n\n'\
'data: {"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":1}}\n\ndata: [DONE]\n\n' > "$work/sse/completion"
printf '\0: ping\r\nevent: message\r\ndata: {"choices":[{"delta":{"role":"assistant"}}]}\r\n\r\n'\
'data: {"choices":[{"delta":{"reasoning_content":"b"},"finish_reason":"length"}]}\r\n\r\n'\
'data: {"error":{"message":"x"}}\r\r' > "$work/sse/chat"
cp "$root"/data/workloads/*.yaml "$work/workload_yaml/"

status=0
printf '%-20s %14s %9s %12s  %s\n' target executions seconds "per second" result
for target in request_json sse workload_yaml; do
  start=$(date +%s.%N)
  (cd "$work" && "$build/perf/fuzz/${target}_fuzz" "$work/$target" -runs=$((runs / workers)) -jobs="$workers" \
    -workers="$workers" -max_len=8192 -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 > "$target.log" 2>&1)
  code=$?
  # libFuzzer leaves the input of any failure beside it (crash-, leak-, oom-, timeout-, slow-unit-).
  kept=$(ls "$work" | grep -cE '^(crash|leak|oom|timeout)-')
  [ "$kept" -gt 0 ] && [ "$code" -eq 0 ] && code=1
  seconds=$(echo "$(date +%s.%N) - $start" | bc)
  # Each worker writes fuzz-K.log and ends with "Done N runs".
  done_runs=$(cat "$work"/fuzz-*.log 2> /dev/null | sed -n 's/^Done \([0-9]*\) runs.*/\1/p' | paste -sd+ | bc)
  result="0 crashes"
  [ "$code" -eq 0 ] || result="FAILED (exit $code, $kept inputs kept in $work; logs in $work/logs-$target)"
  printf '%-20s %14s %9.0f %12.0f  %s\n' "$target" "${done_runs:-0}" "$seconds" \
    "$(echo "${done_runs:-0} / $seconds" | bc -l)" "$result"
  [ "$code" -eq 0 ] || status=1
  mkdir -p "$work/logs-$target" && mv "$work"/fuzz-*.log "$work/logs-$target/" 2> /dev/null
done
exit $status
