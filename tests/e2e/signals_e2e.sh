#!/usr/bin/env bash
# Signals to a measurement against goodput serve (embedded): SIGINT, SIGTERM
# and SIGHUP each abandon the requests in flight at once (a request here takes
# far longer than the time allowed), mark the ledger run interrupted, exit
# 128 + the signal and stop the server; SIGKILL leaves no server behind either
# (the server has a death signal). goodput tune ends the same way, its study
# marked interrupted.
# Usage: signals_e2e.sh GOODPUT_BINARY
set -u
bin="$1"
work="$(mktemp -d)"
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$work"' EXIT
source "$(dirname "$0")/expect.sh"
db="$work/goodput.db"
# Each request generates 3,000 tokens: 30 s or more on goodput-small (10 ms a
# token idle). "At once" is well under that: 10 s leaves a busy machine room
# to write the ledger and stop the server, and still tells an abandoned
# request from one waited for.
cat > "$work/long.yaml" <<'YAML'
name: long
requests: 4
arrival: {type: closed, concurrency: 1}
classes:
  - name: interactive
    prompt: fixed:16
    output: fixed:3000
    slo: ttft p50 <= 10s
YAML

# The goodput serve started by the bench with pid $1, once it listens.
serve_of() {
  for _ in $(seq 1 300); do
    local child
    child=$(pgrep -P "$1" -f "goodput.* serve" | head -1)
    if [ -n "$child" ] && grep -q "on http://" /proc/"$child"/fd/1 2>/dev/null; then echo "$child"; return; fi
    sleep 0.1
  done
}

gone_within() {  # PID SECONDS: "yes" when the process ends in time
  for _ in $(seq 1 $(($2 * 10))); do kill -0 "$1" 2>/dev/null || { echo yes; return; }; sleep 0.1; done
  echo no
}

run=0
for sig in INT TERM HUP; do
  run=$((run + 1))
  "$bin" bench --target embedded --model goodput-small --workload "$work/long.yaml" --ledger "$db" \
    > "$work/out.$sig" 2> "$work/err.$sig" &
  pid=$!
  serve=$(serve_of "$pid")
  check "SIG$sig: the server started" "$([ -n "$serve" ] && echo yes)" yes
  sleep 1  # a request is in flight
  start=$(date +%s.%N)
  kill -"$sig" "$pid"
  wait "$pid"
  code=$?
  elapsed=$(echo "$(date +%s.%N) - $start" | bc)
  check "SIG$sig: exit code" "$code" "$((128 + $(kill -l "$sig")))"
  check "SIG$sig: in-flight request abandoned at once" "$(echo "$elapsed < 10" | bc)" 1
  check "SIG$sig: run marked interrupted" "$(sqlite3 "$db" "SELECT status FROM runs WHERE id = $run")" interrupted
  check "SIG$sig: server stopped" "$(gone_within "$serve" 5)" yes
done

# tune: the same on its baseline's measurement; the study is marked interrupted.
"$bin" tune --target embedded --model goodput-small --workload "$work/long.yaml" --ledger "$db" \
  > "$work/out.tune" 2> "$work/err.tune" &
pid=$!
serve=$(serve_of "$pid")
check "tune: the server started" "$([ -n "$serve" ] && echo yes)" yes
sleep 1
start=$(date +%s.%N)
kill -INT "$pid"
wait "$pid"
code=$?
elapsed=$(echo "$(date +%s.%N) - $start" | bc)
check "tune: exit code" "$code" 130
check "tune: in-flight request abandoned at once" "$(echo "$elapsed < 10" | bc)" 1
check "tune: study marked interrupted" "$(sqlite3 "$db" "SELECT status FROM studies ORDER BY id DESC LIMIT 1")" interrupted
check "tune: says what it kept" "$(grep -c 'interrupted; the points measured so far are kept' "$work/err.tune")" 1
check "tune: server stopped" "$(gone_within "$serve" 5)" yes

# SIGKILL: nothing runs after it, yet the server goes, and its log with it: the
# log is an unlinked file (no name in $TMPDIR for another user to plant or read).
mkdir -p "$work/tmp"
TMPDIR="$work/tmp" "$bin" bench --target embedded --model goodput-small --workload "$work/long.yaml" --ledger "$db" \
  > /dev/null 2>&1 &
pid=$!
serve=$(serve_of "$pid")
check "SIGKILL: the server started" "$([ -n "$serve" ] && echo yes)" yes
check "the server's log has no name in TMPDIR" "$(ls -A "$work/tmp" | wc -l)" 0
kill -KILL "$pid"
wait "$pid" 2>/dev/null
check "SIGKILL: the server dies with its parent" "$(gone_within "$serve" 5)" yes
check "SIGKILL: nothing left in TMPDIR" "$(ls -A "$work/tmp" | wc -l)" 0
# Its run stays 'running' in the file, but its process is gone: it reads as interrupted.
killed=$(sqlite3 "$db" "SELECT MAX(id) FROM runs")
check "SIGKILL: the file still says running" "$(sqlite3 "$db" "SELECT status FROM runs WHERE id = $killed")" running
check "SIGKILL: ledger list shows it interrupted" \
  "$("$bin" ledger list --ledger "$db" | awk -v id="$killed" '$1 == id { print $4 }')" interrupted

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] || { cat "$work"/err.*; exit 1; }
