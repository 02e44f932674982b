#!/usr/bin/env bash
# Runs the public validation set (perf/published_validation: every row
# simulates, or the run fails naming it) and checks that the summary tables
# of the README (whole percents) and of docs/calibration.md (one decimal) are
# this tree's: for each figure kind held out, the count, the median absolute
# error and the share above as the program prints them now.
# Usage: readme_table_test.sh PUBLISHED_VALIDATION GOODPUT_BINARY SOURCE_DIR
set -u
program="$1"
goodput="$2"
root="$3"
out=$("$program" "$goodput" "$root/data/validation" 2> /dev/null) || {
  echo "FAIL: published_validation exited non-zero"
  exit 1
}
# The held-out section's rows for the four kinds: "throughput 42 9.4% 74%".
held=$(printf '%s\n' "$out" | awk '/^Held out/ { on = 1; next } on && /^(throughput|tpot|ttft|itl) / && NF == 4 {
    gsub(/%/, ""); print $1, $2, $3, $4 }')
failed=0
# check FILE DECIMALS KIND:LABEL...: each LABEL row of FILE's table against KIND's figures.
check() {
  local file="$1" decimals="$2" pair kind label now table
  shift 2
  for pair in "$@"; do
    kind=${pair%%:*}
    label=${pair#*:}
    now=$(printf '%s\n' "$held" | awk -v k="$kind" -v d="$decimals" '$1 == k { printf "%s %.*f%% %s%%\n", $2, d, $3, $4 }')
    table=$(awk -F'|' -v l="$label" '{ gsub(/^ +| +$/, "", $2) } $2 == l && NF == 6 {
        gsub(/ /, "", $3); gsub(/ /, "", $4); gsub(/ /, "", $5); print $3 " " $4 " " $5; exit }' "$root/$file")
    if [ -z "$now" ] || [ "$now" != "$table" ]; then
      echo "FAIL: $file's '$label' row says '$table'; published_validation prints '$now' (n, median |err|, above)"
      failed=$((failed + 1))
    else
      echo "ok: $file: $label: $now"
    fi
  done
}
check README.md 0 "throughput:output throughput" "tpot:TPOT" "ttft:TTFT" "itl:ITL"
check docs/calibration.md 1 "throughput:output throughput" "tpot:TPOT (p50 or mean)" "ttft:TTFT (p50 or mean)" \
  "itl:ITL p50"
exit $((failed > 0))
