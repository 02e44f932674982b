#!/usr/bin/env bash
# A fleet measured from the client: two goodput serve replicas behind
# `bench --target URL1,URL2 --router POLICY`. Five shared 512-token system
# prompts, 100 requests: under prefix-affinity each prompt is computed on one
# replica only, so the servers' own prefix caches (their /metrics, summed by
# the client) find it for every other request of it: at least 90% of the
# 95 x 512 tokens that can be found, by hand. Round robin computes each
# prompt on both replicas, so it finds fewer (90 x 512 when nothing is evicted).
# Each replica's share is printed and both shares add up to every request;
# `goodput sim --replicas 2` with the same router finds as many tokens, within 5 points.
# Usage: fleet_e2e.sh GOODPUT_BINARY
set -u
bin="$1"
work="$(mktemp -d)"
here="$(dirname "$0")"
source "$here/listening_port.sh"
source "$here/expect.sh"
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$work"' EXIT

start_serve "$bin" "$work/a.err" --model goodput-tiny --kv-cache-memory 64MiB || exit 1
a="$serve_url"
start_serve "$bin" "$work/b.err" --model goodput-tiny --kv-cache-memory 64MiB || exit 1
b="$serve_url"
cat > "$work/rag.yaml" <<'YAML'
name: rag
requests: 100
arrival: {type: closed, concurrency: 4}
classes:
  - name: rag
    prefix: {tokens: 512, groups: 5}
    prompt: fixed:32
    output: fixed:4
YAML

# Prefix tokens found over the run, summed over both servers' /metrics, by --router.
found() {
  "$bin" bench --target "$a,$b" --router "$1" --model goodput-tiny --workload "$work/rag.yaml" --repeat 1 \
    --no-ledger --json > "$work/$1.json" 2> "$work/$1.err" || { cat "$work/$1.err" >&2; echo 0; return; }
  node -e 'const p = JSON.parse(require("fs").readFileSync(process.argv[1])).results[0].points[0];
    const n = p.replicas.map((r) => r.requests);
    console.log(p.prefix_cache.hit_tokens, n.reduce((a, b) => a + b, 0), Math.min(...n));' "$work/$1.json"
}

read -r affine sent fewest <<< "$(found prefix-affinity)"
echo "prefix-affinity: $affine prompt tokens found, $sent requests sent, the fewer-loaded replica $fewest"
check "every request went to one of the two" "$sent" 100
check "both replicas took requests" "$([ "${fewest:-0}" -gt 0 ] && echo yes)" yes
check "prefix-affinity finds >= 90% of 95 x 512 tokens" "$([ "${affine:-0}" -ge 43776 ] && echo yes)" yes
read -r scattered sent fewest <<< "$(found round-robin)"
echo "round-robin: $scattered prompt tokens found, the fewer-loaded replica $fewest"
check "round robin finds fewer" "$([ "${scattered:-0}" -lt "${affine:-0}" ] && echo yes)" yes
check "round robin splits evenly" "$fewest" 50
# The fleet simulation of the same workload: two instances behind the same
# router find what the two servers found (its KV manager on the same ids):
# on a quiet host exactly as many tokens.
for router in prefix-affinity round-robin; do
  "$bin" sim --model llama-3.1-8b --gpu h100 --replicas 2 --router "$router" --workload "$work/rag.yaml" \
    --repeat 1 --json > "$work/sim-$router.json"
  found_sim=$(node -e 'console.log(JSON.parse(require("fs").readFileSync(process.argv[1])).results[0].points[0]
    .prefix_cache.hit_tokens)' "$work/sim-$router.json")
  served=$([ "$router" = prefix-affinity ] && echo "$affine" || echo "$scattered")
  # Within the issue's 5 points of the 54,400 prompt tokens (two requests of one prompt in flight at
  # once on a busy host both miss: the simulator's timing is not this host's).
  check "the simulated fleet finds what the served one did, within 5 points ($router)" \
    "$(awk -v a="$found_sim" -v b="${served:-0}" 'BEGIN { d = a - b; print (d < 0 ? -d : d) <= 0.05 * 54400 }')" 1
done
"$bin" bench --target "$a,$b" --router prefix-affinity --model goodput-tiny --workload "$work/rag.yaml" \
  --repeat 1 --no-ledger > "$work/table.out" 2>&1
check "the table names the fleet" "$(grep -c "routing in the client" "$work/table.out")" 1
check "the table gives each replica's share" "$(grep -c "replicas: each one's share" "$work/table.out")" 1
"$bin" bench --target "$a,$b" --router least-kv --model goodput-tiny --workload "$work/rag.yaml" --no-ledger \
  > /dev/null 2> "$work/bad.err"
check "least-kv is refused for a client" "$(grep -c "a client does not see" "$work/bad.err")" 1
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
