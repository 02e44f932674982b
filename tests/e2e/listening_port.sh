# Sourced by the e2e scripts that start `goodput serve --port 0`: a port drawn
# at random could be held by another test's connection (ctest -j2 runs two
# tests at once, and a client's local ports come from the same range).
# `listening_port FILE PID` waits until the server PID has written its
# "goodput serve: MODEL on http://HOST:PORT" line (after it listens) to FILE,
# its stderr, and prints PORT; it fails when the server exits first or after
# 30 s.
listening_port() {
  local p
  for _ in $(seq 1 300); do
    p=$(sed -n 's|^goodput serve: .* on http://[^:]*:\([0-9][0-9]*\)$|\1|p' "$1" | tail -1)
    if [ -n "$p" ]; then echo "$p"; return 0; fi
    kill -0 "$2" 2> /dev/null || return 1
    sleep 0.1
  done
  return 1
}

# `start_serve BIN ERR_FILE SERVE_ARGS...` starts `BIN serve --port 0 SERVE_ARGS` with its stderr in
# ERR_FILE and waits until it listens: sets serve_pid and serve_url ("http://127.0.0.1:PORT"); fails,
# printing that stderr, when the server does not come up.
start_serve() {
  local bin="$1" err="$2" port
  shift 2
  "$bin" serve --port 0 "$@" 2> "$err" &
  serve_pid=$!
  port=$(listening_port "$err" "$serve_pid") || { cat "$err"; return 1; }
  serve_url="http://127.0.0.1:$port"
}

# `serve_metric NAME`: the value of the series NAME{...} on
# serve_url's /metrics (vLLM's names, e.g. vllm:num_requests_running).
serve_metric() { curl -s "$serve_url/metrics" | awk -v m="$1" 'index($0, m "{") == 1 { print $NF }'; }
