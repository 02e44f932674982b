#!/usr/bin/env bash
# End-to-end checks of `goodput serve` over real HTTP on loopback: curl, the
# official openai npm client, bad input, a disconnect storm, SIGTERM, and the
# step log it writes (--step-log) fitted by goodput calibrate.
# Usage: serve_e2e.sh GOODPUT_BINARY
set -u
bin="$1"
here="$(cd "$(dirname "$0")" && pwd)"
work="$(mktemp -d)"
source "$here/listening_port.sh"
fail=0
check() {  # check NAME CONDITION...
  local name="$1"; shift
  if "$@"; then echo "ok   $name"; else echo "FAIL $name"; fail=$((fail + 1)); fi
}
"$bin" serve --model goodput-tiny --port 0 --kv-cache-memory 64MiB --api-key test-key --timeout-keep-alive 1 \
  --step-log "$work/steps.log" > "$work/serve.out" 2> "$work/serve.err" &
pid=$!
trap 'kill $pid 2>/dev/null; rm -rf "$work"' EXIT
port=$(listening_port "$work/serve.err" "$pid") || { echo "FAIL goodput serve did not start:"; cat "$work/serve.err"; exit 1; }
base="http://127.0.0.1:$port"
auth=(-H "Authorization: Bearer test-key" -H "content-type: application/json")

check "start-up logs the KV cache size" grep -q "GPU KV cache size: .* tokens" "$work/serve.err"
check "start-up logs the max concurrency" grep -q "Maximum concurrency for 2,048 tokens per request" "$work/serve.err"
body=$(curl -s "${auth[@]}" "$base/v1/completions" -d '{"model":"goodput-tiny","prompt":"Hi","max_tokens":7,"ignore_eos":true}')
check "completion returns 7 tokens" grep -q '"completion_tokens":7' <<< "$body"
# Prefix caching: the same 40-token prompt twice; the second finds its first
# two 16-token blocks in the cache.
ids=$(seq -s, 100 139)
for _ in 1 2; do
  curl -s "${auth[@]}" "$base/v1/completions" -d "{\"model\":\"goodput-tiny\",\"prompt\":[$ids],\"max_tokens\":2}" > /dev/null
done
check "a repeated prompt hits the prefix cache" \
  grep -q '^vllm:prefix_cache_hits_total{model_name="goodput-tiny"} 32$' <<< "$(curl -s "$base/metrics")"
sse=$(curl -s -N "${auth[@]}" "$base/v1/chat/completions" \
  -d '{"model":"goodput-tiny","messages":[{"role":"user","content":"hi"}],"max_tokens":5,"stream":true,"stream_options":{"include_usage":true},"ignore_eos":true}')
check "stream ends with [DONE]" grep -q '^data: \[DONE\]' <<< "$sse"
check "stream carries usage" grep -q '"completion_tokens":5' <<< "$sse"
check "every event line is data:" bash -c "! grep -v -e '^data: ' -e '^$' <<< \"\$1\"" _ "$sse"
code=$(curl -s -o /dev/null -w '%{http_code}' "$base/v1/completions" -d '{"model":"goodput-tiny","prompt":"x"}')
check "missing API key is 401" test "$code" = 401
code=$(curl -s -o "$work/e.json" -w '%{http_code}' "${auth[@]}" "$base/v1/completions" -d '{"model":')
check "malformed JSON is 400 with an error body" bash -c "test $code = 400 && grep -q invalid_request_error $work/e.json"
code=$(curl -s -o /dev/null -w '%{http_code}' "${auth[@]}" "$base/v1/completions" -d '{"model":"other","prompt":"x"}')
check "unknown model is 404" test "$code" = 404
long=$(head -c 3000 /dev/zero | tr '\0' a)
code=$(curl -s -o "$work/e.json" -w '%{http_code}' "${auth[@]}" "$base/v1/completions" -d "{\"model\":\"goodput-tiny\",\"prompt\":\"$long\"}")
check "prompt over the max model length is 400" bash -c "test $code = 400 && grep -q 'maximum context length' $work/e.json"
head -c $((9 << 20)) /dev/zero | tr '\0' ' ' > "$work/big.json"
code=$(curl -s -o /dev/null -w '%{http_code}' "${auth[@]}" "$base/v1/completions" --data-binary @"$work/big.json")
check "body over the limit is 413" test "$code" = 413
code=$(curl -s -o /dev/null -w '%{http_code}' "${auth[@]}" "$base/v1/nothing")
check "unknown route is 404" test "$code" = 404

# An idle connection is closed by the server after --timeout-keep-alive (1 s).
idle_closed() {
  exec 3<>"/dev/tcp/127.0.0.1/$port" || return 1
  local start=$SECONDS
  timeout 5 cat <&3 > /dev/null  # returns when the server closes the socket
  local rc=$?
  exec 3<&-
  [ "$rc" = 0 ] && [ $((SECONDS - start)) -le 3 ]
}
check "idle connection closed after the keep-alive timeout" idle_closed

# Disconnect storm: 20 streams of 100,000 tokens cut after half a second.
for i in $(seq 1 20); do
  curl -s -N -m 0.5 "${auth[@]}" "$base/v1/completions" \
    -d '{"model":"goodput-tiny","prompt":"storm","max_tokens":2000,"ignore_eos":true,"stream":true}' > /dev/null &
done
wait_storm() { for j in $(jobs -p); do [ "$j" != "$pid" ] && wait "$j" 2>/dev/null; done; }
wait_storm
sleep 0.5
metrics=$(curl -s "$base/metrics")
check "no request left running after the storm" grep -q '^vllm:num_requests_running{model_name="goodput-tiny"} 0$' <<< "$metrics"
check "every KV block back after the storm" grep -q '^vllm:kv_cache_usage_perc{model_name="goodput-tiny"} 0$' <<< "$metrics"

if command -v node > /dev/null && command -v npm > /dev/null; then
  cp "$here/openai_client.mjs" "$work/" && (cd "$work" && npm init -y > /dev/null && npm install --silent openai@4 > npm.log 2>&1)
  check "openai npm client" node "$work/openai_client.mjs" "$base/v1"
else
  echo "FAIL node/npm missing"; fail=$((fail + 1))
fi

kill -TERM $pid
wait $pid
rc=$?
check "SIGTERM exits 0" test "$rc" = 0

# The step log: a header, then the steps the engine took; calibrate fits them.
check "the step log has its header" grep -q '^# goodput step log v2' "$work/steps.log"
check "the step log has the steps" test "$(grep -vc '^#' "$work/steps.log")" -gt 50
"$bin" calibrate steps --model goodput-tiny --kv-cache-memory 64MiB --from-step-log "$work/steps.log" \
  -o "$work/cal.json" > "$work/cal.out" 2> "$work/cal.err"
check "calibrate fits the step log" bash -c "test $? = 0 && grep -q 'rms log error' $work/cal.out && grep -q goodput_calibration $work/cal.json"
check "calibrate measures the engine's loop between steps" grep -q "the engine's loop: between steps" "$work/cal.out"
# The slo policy predicts steps with that calibration instead of measuring at start-up.
slo_flags=(--port 0 --kv-cache-memory 64MiB --scheduling-policy slo --slo-tpot 150ms)
"$bin" serve --model goodput-tiny "${slo_flags[@]}" --step-calibration "$work/cal.json" > /dev/null 2> "$work/slo.err" &
slo_pid=$!
for _ in $(seq 1 100); do grep -q "on http://" "$work/slo.err" && break; sleep 0.1; done
kill "$slo_pid"; wait "$slo_pid" 2>/dev/null
check "serve's slo policy predicts steps with calibrate's file" grep -q "step time from $work/cal.json: decode 1 = " "$work/slo.err"
check "... without measuring steps at start-up" bash -c "! grep -q 'measuring step times' $work/slo.err"
mkdir -p "$work/other-tiny"
cp "$GOODPUT_DATA_DIR/models/goodput-tiny/config.json" "$work/other-tiny/"
"$bin" serve --model "$work/other-tiny" "${slo_flags[@]}" --step-calibration "$work/cal.json" > /dev/null 2> "$work/bad.err"
check "serve refuses a step calibration of another model" bash -c "test $? = 2 && grep -q 'was fitted for goodput-tiny, not .*other-tiny' $work/bad.err"
"$bin" serve --model goodput-tiny --port 0 --step-calibration "$work/cal.json" > /dev/null 2> "$work/bad.err"
check "serve refuses a step calibration without the slo policy" bash -c "test $? = 2 && grep -q 'give --scheduling-policy slo' $work/bad.err"
"$bin" serve --model goodput-tiny "${slo_flags[@]}" --step-calibration "$work/steps.log" > /dev/null 2> "$work/bad.err"
check "serve refuses a step calibration that is not one" bash -c "test $? = 2 && grep -q -- '--step-calibration' $work/bad.err"
"$bin" serve --model goodput-tiny --port 0 --scheduling-policy slo --slo-tpot 150ms --kv-cache-memory 200KiB \
  --max-model-len 128 > /dev/null 2> "$work/bad.err"
check "serve refuses a pool too small for its start-up step fit, naming the way out" \
  bash -c "test $? = 2 && grep -q 'give a larger pool, or --step-calibration FILE' $work/bad.err"
sed 's/"cpu": true/"cpu": false/' "$work/cal.json" > "$work/gpu-cal.json"
"$bin" serve --model goodput-tiny "${slo_flags[@]}" --step-calibration "$work/gpu-cal.json" > /dev/null 2> "$work/bad.err"
check "serve refuses a GPU's calibration as its step prior" bash -c "test $? = 2 && grep -q 'not of goodput serve' $work/bad.err"
"$bin" calibrate steps --model goodput-tiny --from-step-log "$work/serve.err" > /dev/null 2> "$work/cal.err"
check "calibrate refuses a file that is not a step log" bash -c "test $? != 0 && grep -q 'not a goodput step log' $work/cal.err"
"$bin" serve --model goodput-tiny --port 0 --step-log /nonexistent-dir/steps.log > /dev/null 2> "$work/bad.err"
check "serve refuses an unwritable step log" bash -c "test $? != 0 && grep -q 'cannot write the step log' $work/bad.err"
# A model directory whose config asks for more memory than the host has, or a size no model has, is
# refused with the reason (vocab_size 1e12 died in std::bad_alloc).
mkdir -p "$work/huge" "$work/typo"
sed 's/"num_hidden_layers": *[0-9]*/"num_hidden_layers": 4000/; s/"hidden_size": *[0-9]*/"hidden_size": 8192/' \
  "$GOODPUT_DATA_DIR/models/goodput-tiny/config.json" > "$work/huge/config.json"
"$bin" serve --model "$work/huge" --port 0 --max-model-len 16 --kv-cache-memory 8GiB > /dev/null 2> "$work/bad.err"
check "serve refuses a model larger than the host's memory" bash -c "test $? = 2 && grep -q 'need more memory than this host has available' $work/bad.err"
sed 's/"vocab_size": *[0-9]*/"vocab_size": 1e12/' "$GOODPUT_DATA_DIR/models/goodput-tiny/config.json" > "$work/typo/config.json"
"$bin" serve --model "$work/typo" --port 0 > /dev/null 2> "$work/bad.err"
check "serve refuses a size no model has" bash -c "test $? = 2 && grep -q 'a size beyond any model' $work/bad.err"
GOODPUT_CPU_ISA=avx1024 "$bin" serve --model goodput-tiny --port 0 > /dev/null 2> "$work/bad.err"
check "serve refuses a GOODPUT_CPU_ISA it does not know" bash -c "test $? = 2 && grep -q \"GOODPUT_CPU_ISA='avx1024' is not one of avx512, avx2, baseline\" $work/bad.err"
# The variable caps goodput's kernels, and the banner says so.
GOODPUT_CPU_ISA=avx2 timeout 60 "$bin" serve --model goodput-tiny --port 0 > /dev/null 2> "$work/isa.err" &
isa_pid=$!
for _ in $(seq 1 100); do grep -q "on http://" "$work/isa.err" && break; sleep 0.1; done
kill "$isa_pid"; wait "$isa_pid" 2>/dev/null
check "GOODPUT_CPU_ISA=avx2 runs goodput's AVX2 kernels and says so" grep -q "goodput's AVX2 kernels (2-8 rows: a dot product per output; more rows and attention: packed panels).*capped by GOODPUT_CPU_ISA=avx2" "$work/isa.err"
trap 'rm -rf "$work"' EXIT
if [ "$fail" -gt 0 ]; then echo "--- server stderr:"; tail -60 "$work/serve.err"; cp "$work/serve.err" /tmp/last_serve.err 2>/dev/null; fi
echo "serve e2e: $fail failed"
exit $(( fail > 0 ))
