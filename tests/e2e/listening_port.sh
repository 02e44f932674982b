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
