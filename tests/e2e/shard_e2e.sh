#!/usr/bin/env bash
# One load from four client processes: `bench --shard I/4 --start-at T`
# each sends its quarter of one open-loop schedule to goodput serve, and
# `goodput ledger merge` makes their four runs one. Against one client
# sending the same schedule, the merged run has the same requests judged,
# the same verdict and throughput within 10%. Bad shard flags are one clear
# error each. Usage: shard_e2e.sh GOODPUT_BINARY
set -u
bin="$1"
work="$(mktemp -d)"
here="$(dirname "$0")"
source "$here/listening_port.sh"
source "$here/expect.sh"
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$work"' EXIT

start_serve "$bin" "$work/serve.err" --model goodput-tiny --kv-cache-memory 64MiB || exit 1
cat > "$work/w.yaml" <<'YAML'
name: steady
requests: 160
classes:
  - name: interactive
    prompt: fixed:64
    output: fixed:16
    slo: ttft p90 <= 2s
YAML
bench=("$bin" bench --target "$serve_url" --model goodput-tiny --workload "$work/w.yaml" --rate 16)

# "requests verdict throughput" of a point's JSON.
figures() {
  node -e 'const d = JSON.parse(require("fs").readFileSync(process.argv[1]));
    const p = d.points ? d.points[0] : d.results[0].points[0];
    console.log(p.classes[0].requests, p.verdict, p.throughput_tokens_per_s);' "$1"
}

"${bench[@]}" --ledger "$work/one.db" --json > "$work/one.json" 2> "$work/one.err" || cat "$work/one.err"
read -r n1 v1 t1 <<< "$(figures "$work/one.json")"
start=$(( $(date +%s) + 3 ))
for i in 0 1 2 3; do
  "${bench[@]}" --shard "$i/4" --start-at "$start" --ledger "$work/shard$i.db" > "$work/shard$i.out" 2>&1 &
done
wait $(jobs -p | grep -v "$serve_pid")
"$bin" ledger merge --into "$work/merged.db" "$work/shard0.db" "$work/shard1.db" "$work/shard2.db" \
  "$work/shard3.db" --json > "$work/merged.json" 2> "$work/merge.err" || cat "$work/merge.err" "$work"/shard*.out
read -r n4 v4 t4 <<< "$(figures "$work/merged.json")"
echo "one client: $n1 requests judged, $v1, $t1 tok/s; four shards merged: $n4, $v4, $t4 tok/s"
check "the same requests judged" "$n4" "$n1"
check "the same verdict" "$v4" "$v1"
check "throughput within 10%" "$(awk -v a="${t4:-0}" -v b="${t1:-1}" 'BEGIN { r = a / b - 1; print (r < 0 ? -r : r) <= 0.10 }')" 1
for i in 0 1 2 3; do
  check "shard $i kept its quarter of the requests" \
    "$(sqlite3 "$work/shard$i.db" "SELECT COUNT(*) FROM requests")" 40
done
"$bin" ledger merge --into "$work/merged.db" "$work/shard0.db" "$work/shard1.db" > /dev/null 2> "$work/bad.err"
check "a missing shard is named" "$(grep -c "2 of the 4 shards" "$work/bad.err")" 1
for args in "--shard 4/4" "--shard 1/4 --repeat 3" "--shard 1/4 --no-ledger" "--shard 0/2 --start-at yesterday" \
  "--shard 0/2 --start-at 1000"; do
  # shellcheck disable=SC2086
  "${bench[@]}" $args --ledger "$work/bad.db" > /dev/null 2> "$work/bad.err"
  code=$?
  check "'$args' is refused" "$([ "$code" -ne 0 ] && [ "$(wc -l < "$work/bad.err")" -ge 1 ] && echo yes)" yes
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
