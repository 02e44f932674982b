#!/usr/bin/env bash
# The docs' example outputs are this tree's: the README's planner and
# simulator examples and docs/tune.md's simulated tune (deterministic; the
# tune takes about 30 s) are run again, and every line of the output block
# the docs print for each (but "...", which marks what they left out, and a
# "$ command" line) must be a line of what the command prints now. Likewise
# the quote rules' table in docs/measuring.md and the README is `goodput ledger rules`'.
# Usage: readme_examples_test.sh SOURCE_DIR GOODPUT_BINARY
set -u
root="$1"
goodput="$2"
cd "$root" || exit 2
failed=0

# The fenced block of file $1 whose first line starts with $2.
block() {
  awk -v first="$2" '
    /^```/ { if (inside) exit; fence = 1; next }
    fence && index($0, first) == 1 { inside = 1 }
    { fence = 0 }
    inside { print }' "$1"
}

# check NAME FILE FIRST_LINE COMMAND...: every printed line of FILE's block is in the output.
check() {
  local name="$1" file="$2" first="$3"
  shift 3
  local expected actual missing
  expected=$(block "$file" "$first")
  if [ -z "$expected" ]; then
    echo "FAIL: $name: no block starting with '$first' in $file"
    failed=$((failed + 1))
    return
  fi
  actual=$("$@" 2>&1)
  missing=$(printf '%s\n' "$expected" | grep -vx ' *\.\.\.' | grep -v '^\$ ' | grep -vxF -f <(printf '%s\n' "$actual"))
  if [ -n "$missing" ]; then
    echo "FAIL: $name: $file prints lines the command no longer does (rerun it and update $file):"
    printf '%s\n' "$missing" | head -5
    failed=$((failed + 1))
  else
    echo "ok: $name ($(printf '%s\n' "$expected" | wc -l) lines)"
  fi
}

check "goodput plan" README.md "What one 1,048,576-token sequence keeps" \
  "$goodput" plan --model qwen3.5-27b --gpu b200 --weights int4 --max-model-len 1M \
  --length-dist "0-200k:0.7,200k-500k:0.3" --compare kv-cache-dtype=fp8
check "plan, an unquantized query's prefill copy" docs/plan.md '$ build/goodput plan --model qwen3.5-27b' \
  "$goodput" plan --model qwen3.5-27b --gpu b200 --weights int4 --max-model-len 240000 --kv-cache-memory 148.5GiB \
  --compare kv-cache-dtype=fp8 --disable-flashinfer-q-quantization
check "goodput sim" README.md "target: sim:b200 (qwen3.5-27b" \
  "$goodput" sim --model qwen3.5-27b --gpu b200 --weights nvfp4 --workload data/workloads/source-003.yaml \
  --num-speculative-tokens 8 --mean-acceptance-length 3.4 --concurrency 1,8,32,128,256 --repeat 5
pd="sim capacity --model llama-2-13b --gpu a100-80gb --workload data/workloads/distserve-fig6.yaml --rate 2 --repeat 1"
pd="$pd --prefill-replicas 2 --decode-replicas 1 --compare-aggregated"
# shellcheck disable=SC2086
check "sim disaggregated" docs/sim.md "\$ build/goodput $pd" "$goodput" $pd
# shellcheck disable=SC2086
check "sim disaggregated, prefill first" docs/sim.md "\$ build/goodput $pd --prefill-first" "$goodput" $pd --prefill-first
dyn="sim capacity --model llama-3.1-70b --gpu h100-sxm --weights fp8 --tp 4 --max-model-len 3500"
dyn="$dyn --max-num-batched-tokens 3500 --max-num-seqs 256 --block-size 128 --gpu-memory-utilization 0.95"
dyn="$dyn --no-enable-prefix-caching --prefill-first --workload data/workloads/dynamo-70b-1node.yaml -c 8"
dyn="$dyn --max-load 256 --repeat 1 --prefill-replicas 4 --prefill-tp 1 --compare-aggregated --engine vllm-v0"
# shellcheck disable=SC2086
check "sim disaggregated, prefill instances apart" docs/sim.md "\$ build/goodput $dyn" "$goodput" $dyn
check "sim fleet --disaggregated" docs/sim.md '$ build/goodput sim fleet --model llama-2-13b' \
  "$goodput" sim fleet --model llama-2-13b --gpu a100-80gb --workload data/workloads/distserve-fig6.yaml \
  --slo "chat: ttft p90 <= 0.4s, tpot p90 <= 25ms" --rate 16 --repeat 1 --disaggregated
check "sim fleet --disaggregated --prefill-tp" docs/sim.md '$ build/goodput sim fleet --model llama-3.1-70b' \
  "$goodput" sim fleet --model llama-3.1-70b --gpu h100-sxm --weights fp8 --tp 4 --max-model-len 3500 \
  --max-num-batched-tokens 3500 --max-num-seqs 256 --block-size 128 --gpu-memory-utilization 0.95 \
  --no-enable-prefix-caching --prefill-first --workload data/workloads/dynamo-70b-1node.yaml \
  --slo "chat: ttft p90 <= 2s, tpot p50 <= 26.3ms" --rate 8 --repeat 1 --disaggregated --prefill-tp 1
check "goodput tune" docs/tune.md '$ build/goodput tune --target sim:b200 --model qwen3.5-27b' \
  "$goodput" tune --target sim:b200 --model qwen3.5-27b --engine-args "--weights int4" \
  --workload data/workloads/chat.yaml --no-ledger
# Every line `goodput ledger rules` prints is a line of docs/measuring.md and of the README.
rules=$("$goodput" ledger rules 2>&1)
for doc in docs/measuring.md README.md; do
  missing=$(printf '%s\n' "$rules" | grep -vxF -f "$doc")
  if [ -z "$rules" ] || [ -n "$missing" ]; then
    echo "FAIL: $doc's quote rules differ from goodput ledger rules':"
    printf '%s\n' "${missing:-(no output)}" | head -5
    failed=$((failed + 1))
  else
    echo "ok: quote rules in $doc ($(printf '%s\n' "$rules" | wc -l) lines)"
  fi
done
exit $((failed > 0))
