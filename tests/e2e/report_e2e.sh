#!/usr/bin/env bash
# The HTML report in a real browser: a sweep (simulator target, so it is
# quick) goes to a ledger; `goodput report` writes one HTML file; headless
# Chromium (Debian's package) renders it, and the rendered DOM must hold the
# answer first, the charts with the ledger's own figures in them and the SLO
# thresholds drawn. In it and in two harder reports (three settings of a
# workload with an offline class; a single load) no label's box, as Chromium
# laid it out, overlaps another's or leaves its chart (label_boxes.html).
# Usage: report_e2e.sh GOODPUT_BINARY
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
check "rendered charts" "$(grep -o '<svg id="[a-z_]*"' "$work/dom.html" | tr '\n' ' ')" \
  '<svg id="throughput" <svg id="ttft" <svg id="tpot" <svg id="attainment" <svg id="goodput" <svg id="pareto" '\
'<svg id="ttft_cdf" <svg id="tpot_cdf" <svg id="itl_cdf" '
check "the answer comes first" "$(grep -o '<h1>goodput run 1</h1><section id="answer">' "$work/dom.html" | wc -l)" 1
capacity='every class holds its SLO): <strong>at least 64 clients (the highest load tried)</strong>'
check "the answer names the capacity" "$(grep -c "$capacity" "$work/dom.html")" 1
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
check "a marker on every load of the throughput line" \
  "$(sed -n 's/.*<svg id="throughput"\(.*\)<svg id="ttft".*/\1/p' "$work/dom.html" | grep -o 'class="point"' | wc -l)" 3

# No label meets another, in this report and in two harder ones.
labels() {  # REPORT NAME: the overlapping or escaping labels, as Chromium laid them out, or "none"
  cat "$1" "$(dirname "$0")/label_boxes.html" > "$work/$2-boxes.html"
  chrome "boxes-$2" --dump-dom "file://$work/$2-boxes.html" 2> /dev/null > "$work/$2-boxes.dom"
  grep -o 'data-texts="[0-9]*"' "$work/$2-boxes.dom" | grep -qv 'data-texts="0"' ||
    { echo "no labels measured"; return; }
  sed -n 's/.*data-overlaps="\([^"]*\)".*/\1/p' "$work/$2-boxes.dom"
}
check "labels apart: ladder of three loads" "$(labels "$work/report.html" ladder)" none
# Two classes with the same targets (the report before this check drew their
# SLO labels on one spot, and over a series' name) and an offline class.
cat > "$work/two.yaml" <<'YAML'
name: two-classes
seed: 2
requests: 200
arrival: {type: poisson, rate: 2}
classes:
  - name: chat
    share: 1
    prompt: lognormal:1k,0.8
    output: lognormal:250,0.6
    slo: ttft p99 <= 1s, tpot p99 <= 100ms
  - name: agent
    share: 1
    prompt: lognormal:2k,0.5
    output: lognormal:100,0.5
    slo: ttft p99 <= 1s, tpot p99 <= 100ms
  - name: offline
    concurrency: 4
    offline: true
    prompt: uniform:2k-8k
    output: fixed:512
YAML
"$bin" sweep --target sim:h100 --model llama-3.1-8b --workload "$work/two.yaml" --rate 1,4 \
  --vary max-num-seqs=8,16,64 --repeat 1 --ledger "$db" > /dev/null
"$bin" report 2 --ledger "$db" -o "$work/vary.html" > /dev/null
check "labels apart: three settings, two classes of one SLO, an offline class" "$(labels "$work/vary.html" vary)" none
"$bin" bench --target sim:h100 --model llama-3.1-8b --workload "$data/workloads/chat.yaml" --requests 100 \
  --concurrency 8 --ledger "$db" > /dev/null
"$bin" report 3 --ledger "$db" -o "$work/one.html" > /dev/null
check "labels apart: one load" "$(labels "$work/one.html" one)" none
for id in throughput ttft tpot attainment goodput pareto; do
  check "one load: its point drawn on the $id chart" \
    "$(sed "s/<svg /\n<svg /g" "$work/one.html" | grep "^<svg id='$id'" | grep -c "class='point'")" 1
done
chrome png --window-size=1400,1600 --screenshot="$work/report.png" "file://$work/report.html" > /dev/null 2>&1
check "screenshot rendered" "$([ "$(stat -c %s "$work/report.png" 2> /dev/null || echo 0)" -gt 20000 ] && echo yes)" yes

"$bin" report 9 --ledger "$db" -o "$work/x.html" 2> "$work/err"
check "unknown run exits 2" "$?" 2
check "unknown run writes nothing" "$([ -e "$work/x.html" ] && echo written || echo none)" none
check "unknown run names the command run" "$(grep -c '^goodput report: no run 9 in the ledger' "$work/err")" 1
"$bin" report 1 --ledger "$db" -o /nonexistent-dir/r.html 2> "$work/err2"
check "unwritable path exits 2" "$?" 2
check "unwritable path message" "$(grep -c 'cannot write /nonexistent-dir/r.html' "$work/err2")" 1
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
