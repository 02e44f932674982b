#!/usr/bin/env bash
# The HTML report in a real browser: a sweep (simulator target, so it is
# quick) goes to a ledger; `goodput report` writes one HTML file; headless
# Chromium (Debian's package) renders it, and the rendered DOM must hold the
# five charts with the ledger's own figures in them and the SLO thresholds
# drawn. Usage: report_e2e.sh GOODPUT_BINARY
set -u
bin="$1"
data="$(cd "$(dirname "$0")/../../data" && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
source "$(dirname "$0")/expect.sh"
db="$work/goodput.db"
chrome() {
  timeout 120 chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync --user-data-dir="$work/profile-$1" "${@:2}"
}

"$bin" sweep --target sim:h100 --model llama-3.1-8b --workload "$data/workloads/chat.yaml" --requests 300 \
  --concurrency 1,8,64 --repeat 3 --ledger "$db" > /dev/null
check "sweep exit code" "$?" 0
"$bin" report 1 --ledger "$db" -o "$work/report.html" > "$work/out"
check "report exit code" "$?" 0
check "report names its file" "$(grep -c "report: $work/report.html (3 points of run 1)" "$work/out")" 1

chrome dom --dump-dom "file://$work/report.html" > "$work/dom.html" 2> /dev/null
check "rendered charts" "$(grep -o '<svg id="[a-z]*"' "$work/dom.html" | tr '\n' ' ')" \
  '<svg id="throughput" <svg id="ttft" <svg id="tpot" <svg id="attainment" <svg id="goodput" '
# The throughput line must carry exactly the ledger's figures.
want=$(sqlite3 "$db" "SELECT group_concat(concurrency || ',' || throughput, ' ') FROM (SELECT * FROM points ORDER BY concurrency)")
got=$(grep -o 'data-series="throughput" data-points="[^"]*"' "$work/dom.html" | sed 's/.*data-points="\([^"]*\)"/\1/')
check "throughput points match the ledger" "$(awk -v a="$got" -v b="$want" 'BEGIN {
  n = split(a, x, "[ ,]"); m = split(b, y, "[ ,]"); if (n != m || n != 6) { print "no"; exit }
  for (i = 1; i <= n; i++) if (x[i] - y[i] > 1e-6 * (y[i] + 1) || y[i] - x[i] > 1e-6 * (y[i] + 1)) { print "no"; exit }
  print "yes" }')" yes
check "TTFT threshold drawn at 1000 ms" "$(grep -c 'data-label="interactive p99 SLO" data-value="1000"' "$work/dom.html")" 1
check "TPOT threshold drawn at 100 ms" "$(grep -c 'data-label="interactive p99 SLO" data-value="100"' "$work/dom.html")" 1
check "capacity marked" "$(grep -o 'class="marker" data-label="capacity 64"' "$work/dom.html" | wc -l)" 2
chrome png --window-size=1400,1600 --screenshot="$work/report.png" "file://$work/report.html" > /dev/null 2>&1
check "screenshot rendered" "$([ "$(stat -c %s "$work/report.png" 2> /dev/null || echo 0)" -gt 20000 ] && echo yes)" yes

"$bin" report 9 --ledger "$db" -o "$work/x.html" 2> "$work/err"
check "unknown run exits 2" "$?" 2
check "unknown run writes nothing" "$([ -e "$work/x.html" ] && echo written || echo none)" none
"$bin" report 1 --ledger "$db" -o /nonexistent-dir/r.html 2> "$work/err2"
check "unwritable path exits 2" "$?" 2
check "unwritable path message" "$(grep -c 'cannot write /nonexistent-dir/r.html' "$work/err2")" 1
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
