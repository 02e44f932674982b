#!/usr/bin/env bash
# The ledger end to end: a sweep against goodput serve (embedded) records its
# points; Ctrl-C (SIGINT) in the middle of the sweep exits 130, keeps every
# point already measured and marks the run interrupted; `ledger list/show/
# quote` read it back, and the file is checked with the sqlite3 shell.
# Usage: ledger_e2e.sh GOODPUT_BINARY
set -u
bin="$1"
data="$(cd "$(dirname "$0")/../../data" && pwd)"
work="$(mktemp -d)"
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$work"' EXIT
db="$work/goodput.db"
source "$(dirname "$0")/expect.sh"

# A sweep long enough to interrupt: four loads, two repetitions each.
"$bin" sweep --target embedded --model goodput-tiny --workload "$data/workloads/chat-cpu.yaml" \
  --concurrency 1,2,4,8 --repeat 2 --max-repeat 2 --requests 40 --serve-args "--kv-cache-memory 64MiB --served-model-name e2e-$$" \
  --ledger "$db" \
  > "$work/out" 2> "$work/err" &
pid=$!
for _ in $(seq 1 600); do
  n=$(sqlite3 "$db" "SELECT COUNT(*) FROM points" 2>/dev/null || echo 0)
  [ "${n:-0}" -ge 1 ] && break
  sleep 0.1
done
kill -INT "$pid"
wait "$pid"
check "exit code after SIGINT" "$?" 130
check "run marked interrupted" "$(sqlite3 "$db" "SELECT status FROM runs WHERE id = 1")" interrupted
kept=$(sqlite3 "$db" "SELECT COUNT(*) FROM points WHERE run_id = 1")
check "measured points kept" "$([ "$kept" -ge 1 ] && [ "$kept" -lt 4 ] && echo yes)" yes
check "repetitions kept with their points" "$(sqlite3 "$db" "SELECT COUNT(*) FROM repetitions")" "$((kept * 2))"
check "stderr names the run" "$(grep -c 'interrupted; the points measured so far are kept as run 1' "$work/err")" 1
check "no server left behind" "$(pgrep -f "served-model-name e2e-$$" | wc -l)" 0

# A complete run with its requests kept.
"$bin" bench --target embedded --model goodput-tiny --workload "$data/workloads/chat-cpu.yaml" --concurrency 2 \
  --requests 10 --repeat 3 --max-repeat 3 --serve-args "--kv-cache-memory 64MiB" --ledger "$db" --save-requests \
  > "$work/out2"
check "bench exit code" "$?" 0
check "bench names its ledger run" "$(grep -c "ledger: run 2 in $db" "$work/out2")" 1
check "requests kept" "$(sqlite3 "$db" "SELECT COUNT(*) FROM requests")" 30
check "list shows both runs" "$("$bin" ledger list --ledger "$db" | grep -cE '^ +[12]  ')" 2
"$bin" ledger show 2 --ledger "$db" > "$work/show"
check "show names the target" "$(grep -c 'target:   embedded --kv-cache-memory 64MiB' "$work/show")" 1
"$bin" ledger quote 1 --ledger "$db" > "$work/quote"
check "quote says the run did not complete" "$(grep -c 'did not complete' "$work/quote")" 1
check "quote gives a verdict per kept point" "$(grep -cE "quotable" "$work/quote")" "$kept"
"$bin" ledger quote 9 --ledger "$db" 2> "$work/bad"
check "unknown run exits 2" "$?" 2
check "unknown run message" "$(grep -c 'no run 9' "$work/bad")" 1

# A stored summary damaged by hand: show and report still work from the columns.
sqlite3 "$db" "UPDATE points SET summary = '{\"classes\": [' WHERE run_id = 2"
"$bin" ledger show 2 --ledger "$db" --json > "$work/show.json"
check "show --json with a damaged summary exits 0" "$?" 0
check "show --json says the summary is damaged" "$(grep -c 'summary_error' "$work/show.json")" 1
"$bin" report 2 --ledger "$db" --out "$work/r2.html" > /dev/null
check "report with a damaged summary exits 0" "$?" 0
check "report written" "$([ -s "$work/r2.html" ] && echo yes)" yes

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] || { cat "$work/err"; exit 1; }
