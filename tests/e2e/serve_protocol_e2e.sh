#!/usr/bin/env bash
# goodput serve at the HTTP level, with curl and raw sockets: HEAD has no
# body, HTTP/1.0 streams without chunked encoding, oversized headers get 431
# and garbage 400, a wrong method 405 with Allow, the Bearer scheme in any
# case; a non-streaming request whose client leaves is aborted at once; out
# of file descriptors, accept() backs off instead of spinning.
# Usage: serve_protocol_e2e.sh GOODPUT_BINARY
set -u
bin="$1"
work="$(mktemp -d)"
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$work"' EXIT
source "$(dirname "$0")/expect.sh"
source "$(dirname "$0")/listening_port.sh"

# A raw request; prints the whole answer (the server closes after it).
raw() { exec 3<>"/dev/tcp/127.0.0.1/$port"; printf '%b' "$1" >&3; timeout 5 cat <&3; exec 3<&-; }

# Few descriptors: the server runs out of them before the clients do.
( ulimit -n 64; exec "$bin" serve --model goodput-small --port 0 --kv-cache-memory 256MiB --api-key k \
    > "$work/serve.out" 2> "$work/serve.err" ) &
pid=$!
port=$(listening_port "$work/serve.err" "$pid") || { echo "FAIL goodput serve did not start:"; cat "$work/serve.err"; exit 1; }
base="http://127.0.0.1:$port"
spid=$(pgrep -P "$pid" -f "goodput.* serve" || echo "$pid")

head=$(raw "HEAD /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
check "HEAD: 200" "$(head -1 <<< "$head" | tr -d '\r')" "HTTP/1.1 200 OK"
check "HEAD: no body after the header" "$(sed '1,/^\r$/d' <<< "$head" | wc -c)" 0
check "HEAD: Content-Length of the GET" "$(grep -ic '^content-length: [1-9]' <<< "$head")" 1

curl -s -i -N --http1.0 -H "Authorization: Bearer k" -H "content-type: application/json" "$base/v1/completions" \
  -d '{"model":"goodput-small","prompt":"x","max_tokens":3,"ignore_eos":true,"stream":true}' > "$work/h10"
check "HTTP/1.0 stream: no chunked encoding" "$(grep -ic '^transfer-encoding' "$work/h10")" 0
check "HTTP/1.0 stream: ends with [DONE]" "$(grep -c '^data: \[DONE\]' "$work/h10")" 1

big=$(head -c 20000 /dev/zero | tr '\0' a)
check "oversized headers: 431" "$(curl -s -o /dev/null -w '%{http_code}' -H "X-Big: $big" "$base/health")" 431
check "garbage: 400" "$(raw "GARBAGE\r\n\r\n" | head -1 | tr -d '\r')" "HTTP/1.1 400 Bad Request"
allow=$(curl -s -D - -o /dev/null -H "Authorization: Bearer k" "$base/v1/completions" | tr -d '\r')
check "wrong method: 405" "$(head -1 <<< "$allow" | cut -d' ' -f2)" 405
check "405 names what is allowed" "$(grep -i '^allow:' <<< "$allow")" "Allow: POST"
check "bearer in lower case" "$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: bearer k" "$base/v1/models")" 200
check "wrong key: 401" "$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer K" "$base/v1/models")" 401

# A non-streaming request of 3,000 tokens (tens of seconds) whose client
# gives up after a second: the server notices at once and frees the slot.
curl -s -m 1 -H "Authorization: Bearer k" -H "content-type: application/json" "$base/v1/completions" \
  -d '{"model":"goodput-small","prompt":"x","max_tokens":3000,"ignore_eos":true}' > /dev/null
sleep 1
check "abandoned non-streaming request aborted" \
  "$(curl -s "$base/metrics" | grep -c '^vllm:num_requests_running{model_name="goodput-small"} 0$')" 1

# Out of descriptors: 80 idle connections against a limit of 64. The server
# must not spin on accept() (that would burn a core); once they close, it
# serves again.
for i in $(seq 1 80); do exec {fd}<>"/dev/tcp/127.0.0.1/$port" 2>/dev/null && fds+=("$fd"); done
sleep 0.5
ticks() { awk '{print $14 + $15}' "/proc/$spid/stat"; }
t0=$(ticks)
sleep 2
t1=$(ticks)
check "out of descriptors: no busy loop (CPU ticks in 2 s < 40)" "$([ $((t1 - t0)) -lt 40 ] && echo yes)" yes
for fd in "${fds[@]}"; do exec {fd}<&-; done
ok=no
for _ in $(seq 1 50); do curl -sf -m 2 "$base/health" > /dev/null && { ok=yes; break; }; sleep 0.2; done
check "serves again after the connections close" "$ok" yes

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] || { tail -20 "$work/serve.err"; exit 1; }
