# Sourced by tests/e2e/slo_e2e.sh and perf/slo_vs_priority.sh: the slo
# policy's scenario on goodput serve (goodput-small, TPOT target 150 ms). An
# interactive stream of 80 tokens decodes while a 1,500-token offline prompt
# arrives. `slo_scenario BIN POLICY WORK [AFTER_START]` starts the server
# under POLICY (its stderr in WORK/serve-POLICY.err), runs AFTER_START (a
# command, e.g. starting a neighbour) once it listens, and prints the
# stream's "WORST_GAP_MS EVENTS TTFT_MS" (tests/e2e/stream_gaps.mjs); it
# fails when the server does not start.
slo_scenario_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$slo_scenario_dir/listening_port.sh"

slo_scenario() {
  local bin="$1" policy="$2" work="$3" after_start="${4:-}"
  local long_prompt
  long_prompt=$(head -c 1500 /dev/zero | tr '\0' 'a')
  "$bin" serve --model goodput-small --port 0 --kv-cache-memory 256MiB --max-num-batched-tokens 2048 \
    --scheduling-policy "$policy" --slo-tpot 150ms 2> "$work/serve-$policy.err" &
  local pid=$!
  local port
  if ! port=$(listening_port "$work/serve-$policy.err" "$pid"); then
    echo "goodput serve ($policy) did not start: $(cat "$work/serve-$policy.err")" >&2
    return 1
  fi
  [ -n "$after_start" ] && $after_start
  node "$slo_scenario_dir/stream_gaps.mjs" "http://127.0.0.1:$port" \
    '{"model":"goodput-small","prompt":"hello","max_tokens":80,"ignore_eos":true,"stream":true}' > "$work/gap-$policy" &
  local client=$!
  sleep 0.3
  curl -s -o /dev/null -H "x-goodput-class: offline" -H "content-type: application/json" \
    "http://127.0.0.1:$port/v1/completions" \
    -d "{\"model\":\"goodput-small\",\"prompt\":\"$long_prompt\",\"max_tokens\":1}"
  wait "$client"
  kill -TERM "$pid"
  wait "$pid" 2>/dev/null
  cat "$work/gap-$policy"
}
