#!/usr/bin/env bash
# https targets: socat terminates TLS with a certificate made here by openssl
# and forwards to goodput serve. With --insecure the measurement runs over
# TLS and every request succeeds with exact lengths; without it the
# self-signed certificate is refused, and each request records why.
# Usage: tls_e2e.sh GOODPUT_BINARY
set -u
bin="$1"
data="$(cd "$(dirname "$0")/../../data" && pwd)"
work="$(mktemp -d)"
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$work"' EXIT
source "$(dirname "$0")/expect.sh"
openssl req -x509 -newkey rsa:2048 -nodes -keyout "$work/key.pem" -out "$work/cert.pem" -days 1 \
  -subj "/CN=127.0.0.1" 2> /dev/null
cat "$work/cert.pem" "$work/key.pem" > "$work/both.pem"
source "$(dirname "$0")/listening_port.sh"
"$bin" serve --model goodput-tiny --kv-cache-memory 64MiB --port 0 2> "$work/serve.err" &
serve_port=$(listening_port "$work/serve.err" $!) || { echo "FAIL goodput serve did not start:"; cat "$work/serve.err"; exit 1; }
# socat cannot say which port it got: one below the range the kernel gives
# clients' local ports (32768-60999 here), so no test's connection holds it.
tls_port=$(( 20000 + RANDOM % 12000 ))
socat "OPENSSL-LISTEN:$tls_port,bind=127.0.0.1,reuseaddr,fork,cert=$work/both.pem,verify=0" \
  "TCP:127.0.0.1:$serve_port" 2> "$work/socat.err" &
for _ in $(seq 1 50); do curl -skf "https://127.0.0.1:$tls_port/health" > /dev/null && break; sleep 0.1; done

"$bin" bench --target "https://127.0.0.1:$tls_port" --insecure --model goodput-tiny \
  --workload "$data/workloads/chat-cpu.yaml" --concurrency 2 --requests 8 --no-ledger --json \
  --slo "interactive: ttft p50 <= 2s, tpot p50 <= 150ms" > "$work/ok.json"
check "bench over TLS exits 0" "$?" 0
check "no failed request over TLS" "$(grep -o '"failed":[^,}]*' "$work/ok.json")" '"failed":0E0'
check "the SLO holds over TLS (its class, then the point)" "$(grep -o '"verdict":"holds","holds":true' "$work/ok.json" | wc -l)" 2

"$bin" bench --target "https://127.0.0.1:$tls_port" --model goodput-tiny \
  --workload "$data/workloads/chat-cpu.yaml" --concurrency 2 --requests 4 --no-ledger > "$work/bad.txt"
check "untrusted certificate: every request failed, exit 3" "$?" 3
check "untrusted certificate: every request failed with the TLS reason" \
  "$(grep -c '4 failed requests per run, e.g. TLS handshake with 127.0.0.1: certificate verify failed' "$work/bad.txt")" 1
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] || { cat "$work/ok.json" "$work/bad.txt" "$work/socat.err"; exit 1; }
