#!/usr/bin/env bash
# The slo policy against plain priority on goodput serve (goodput-small), in
# the scenario of tests/e2e/slo_scenario.sh: an interactive stream of 80
# tokens decodes while a 1,500-token offline prompt arrives. Prints, per
# condition and policy, the interactive stream's worst inter-token gap and
# its TTFT (median and worst of ROUNDS rounds). Conditions: an idle machine;
# one core busy-looping from before the server starts (its start-up step fit
# sees the neighbour); one core busy-looping from after the fit (the fit saw
# an idle machine: only learning the step time online keeps the target).
# Target of issue 30: slo <= priority on both figures in every condition.
# Usage: perf/slo_vs_priority.sh GOODPUT_BINARY [ROUNDS]   (default 5)
set -u
bin="$1"
rounds="${2:-5}"
source "$(cd "$(dirname "$0")" && pwd)/../tests/e2e/slo_scenario.sh"
work="$(mktemp -d)"
busy=""
trap '[ -n "$busy" ] && kill "$busy" 2>/dev/null; rm -rf "$work"' EXIT

spin() { sh -c 'while :; do :; done' & busy=$!; }
unspin() { [ -n "$busy" ] && kill "$busy" 2>/dev/null; busy=""; }

# One round under policy $1, condition $2: prints "GAP_MS TTFT_MS".
round() {
  local hook=""
  [ "$2" = "busy-before-start" ] && spin
  [ "$2" = "busy-after-start" ] && hook="spin_detached"
  local line
  line=$(slo_scenario "$bin" "$1" "$work" "$hook") || { unspin; return 1; }
  unspin
  [ -f "$work/spinner" ] && kill "$(cat "$work/spinner")" 2>/dev/null && rm -f "$work/spinner"
  echo "$line" | awk '{ print $1, $3 }'
}
# Started inside slo_scenario's subshell: its pid goes through a file.
spin_detached() { sh -c 'while :; do :; done' > /dev/null 2>&1 & echo $! > "$work/spinner"; }

# "median / worst" of the numbers on stdin.
summary() { sort -n | awk '{ v[NR] = $1 } END { printf "%.0f / %.0f", v[int((NR + 1) / 2)], v[NR] }'; }

echo "goodput serve --model goodput-small, TPOT target 150 ms; ${rounds} rounds each; $(nproc) CPUs; load $(cut -d' ' -f1-3 /proc/loadavg)"
printf "%-20s %-9s %-28s %s\n" condition policy "worst gap ms (median / max)" "TTFT ms (median / max)"
for condition in idle busy-before-start busy-after-start; do
  for policy in priority slo; do
    : > "$work/rounds"
    for _ in $(seq 1 "$rounds"); do round "$policy" "$condition" >> "$work/rounds" || exit 1; done
    printf "%-20s %-9s %-28s %s\n" "$condition" "$policy" "$(cut -d' ' -f1 "$work/rounds" | summary)" \
      "$(cut -d' ' -f2 "$work/rounds" | summary)"
  done
done
