#!/usr/bin/env bash
# The README's example outputs are this tree's: the planner's and the
# simulator's examples (cheap and deterministic) are run again, and every
# line of the output block the README prints for each (but "...", which marks
# what it left out) must be a line of what the command prints now. Likewise
# the quote rules' table in docs/measuring.md is `goodput ledger rules`'.
# Usage: readme_examples_test.sh SOURCE_DIR GOODPUT_BINARY
set -u
root="$1"
goodput="$2"
cd "$root" || exit 2
failed=0

# The fenced block of README.md whose first line starts with $1.
block() {
  awk -v first="$1" '
    /^```/ { if (inside) exit; fence = 1; next }
    fence && index($0, first) == 1 { inside = 1 }
    { fence = 0 }
    inside { print }' README.md
}

# check NAME FIRST_LINE COMMAND...: every printed line of the README's block is in the output.
check() {
  local name="$1" first="$2"
  shift 2
  local expected actual missing
  expected=$(block "$first")
  if [ -z "$expected" ]; then
    echo "FAIL: $name: no block starting with '$first' in README.md"
    failed=$((failed + 1))
    return
  fi
  actual=$("$@" 2>&1)
  missing=$(printf '%s\n' "$expected" | grep -vx '\.\.\.' | grep -vxF -f <(printf '%s\n' "$actual"))
  if [ -n "$missing" ]; then
    echo "FAIL: $name: README.md prints lines the command no longer does (rerun it and update the README):"
    printf '%s\n' "$missing" | head -5
    failed=$((failed + 1))
  else
    echo "ok: $name ($(printf '%s\n' "$expected" | wc -l) lines)"
  fi
}

check "goodput plan" "What one 1,048,576-token sequence keeps" \
  "$goodput" plan --model qwen3.5-27b --gpu b200 --weights int4 --max-model-len 1M \
  --length-dist "0-200k:0.7,200k-500k:0.3" --compare kv-cache-dtype=fp8
check "goodput sim" "target: sim:b200 (qwen3.5-27b" \
  "$goodput" sim --model qwen3.5-27b --gpu b200 --weights int4 --workload data/workloads/chat.yaml \
  --slo "interactive: ttft p99 <= 1s, tpot p99 <= 100ms" --concurrency 1,8,32,128,256 --repeat 5
# Every line `goodput ledger rules` prints is a line of docs/measuring.md.
rules=$("$goodput" ledger rules 2>&1)
missing=$(printf '%s\n' "$rules" | grep -vxF -f docs/measuring.md)
if [ -z "$rules" ] || [ -n "$missing" ]; then
  echo "FAIL: docs/measuring.md's quote rules differ from goodput ledger rules':"
  printf '%s\n' "${missing:-(no output)}" | head -5
  failed=$((failed + 1))
else
  echo "ok: quote rules ($(printf '%s\n' "$rules" | wc -l) lines)"
fi
exit $((failed > 0))
