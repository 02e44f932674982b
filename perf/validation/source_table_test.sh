#!/usr/bin/env bash
# The source document's table (data/source-documents/003-b200-table.yaml):
# - the shipped workload (data/workloads/source-003.yaml) is what
#   `source_table --derive` derives from the table (means within 1%), and the
#   answers each row implies by Little's law are the hand calculation's;
# - under it the simulator's throughput is within 15% of the source's at
#   every load (two of the four held out), and its per-request speed at 8
#   clients (the row the answers' mean came from);
# - the card's speed is the source's: at 32-256 clients one user's time per
#   token against the requests decoding at once lies, for the simulator, within
#   15% of the straight line through the source's three rows (docs/sim.md: the
#   rows differ in how many requests decode at once, not in the step);
# - docs/sim.md prints what the program prints.
# Usage: source_table_test.sh SOURCE_TABLE_BINARY GOODPUT_BINARY SOURCE_DIR
set -u
table="$1"
goodput="$2"
cd "$3" || exit 2
failed=0
fail() { echo "FAIL: $*"; failed=$((failed + 1)); }

derived=$("$table" --derive --json "$goodput" 2>/dev/null) || fail "source_table --derive exited non-zero"
shipped=$(grep -E '^    (prompt|output):' data/workloads/source-003.yaml)
# Each check prints "ok ..." or "FAIL ...": node reads the JSON, the shell counts.
while read -r line; do
  case "$line" in ok*) echo "$line" ;; *) fail "${line#FAIL }" ;; esac
done < <(DERIVED="$derived" SHIPPED="$shipped" node -e '
  const d = JSON.parse(process.env.DERIVED).derived;
  const ship = Object.fromEntries(process.env.SHIPPED.split("\n").map(l => l.trim().split(": ")));
  const top = s => Number(s.split(",").pop().split(":")[0].split("-")[1]);
  const mean = s => Number(s.split(":")[1].split(",")[0]);
  const close = (a, b) => Math.abs(a / b - 1) <= 0.01;
  console.log((close(top(ship.prompt), top(d.prompt)) ? "ok" : "FAIL") +
              ` prompts: shipped ${ship.prompt}, derived ${d.prompt}`);
  console.log((close(mean(ship.output), mean(d.output)) ? "ok" : "FAIL") +
              ` answers: shipped ${ship.output}, derived ${d.output}`);
  // Little'"'"'s law on each row by hand: X TTFT / (c - X / s), e.g. 2500 x 5.1 / (32 - 2500 / 120) = 1141.8.
  const hand = {8: 522.5, 32: 1141.8, 128: 962.0, 256: 547.8};
  for (const r of d.answers_by_row) {
    const ok = r.answers_mean !== null && Math.abs(r.answers_mean / hand[r.concurrency] - 1) <= 0.005;
    console.log((ok ? "ok" : "FAIL") + ` answers implied at ${r.concurrency}: ${r.answers_mean}, by hand ${hand[r.concurrency]}`);
  }')

sim=$("$table" --json "$goodput" 2>/dev/null) || fail "source_table exited non-zero"
while read -r line; do
  case "$line" in ok*) echo "$line" ;; *) fail "${line#FAIL }" ;; esac
done < <(SIM="$sim" node -e '
  const all = JSON.parse(process.env.SIM).rows;
  for (const r of all) {
    const checks = [["throughput", true], ["per_request_tok_s", r.concurrency === 8]];
    for (const [key, judged] of checks) {
      if (!judged) continue;
      const e = r[key].error;
      console.log((Math.abs(e) <= 0.15 ? "ok" : "FAIL") +
                  ` ${key} at ${r.concurrency}: source ${r[key].source}, sim ${r[key].sim.toFixed(0)} (${(100 * e).toFixed(1)}%)`);
    }
  }
  // Seconds per token of one user (1 / per-request speed) against the requests
  // decoding at once (throughput / per-request speed): the line of the source.
  const rows = all.filter(r => r.concurrency >= 32);
  const point = (r, side) => [r.throughput[side] / r.per_request_tok_s[side], 1 / r.per_request_tok_s[side]];
  const src = rows.map(r => point(r, "source"));
  const mx = src.reduce((s, p) => s + p[0], 0) / src.length, my = src.reduce((s, p) => s + p[1], 0) / src.length;
  const slope = src.reduce((s, p) => s + (p[0] - mx) * (p[1] - my), 0) / src.reduce((s, p) => s + (p[0] - mx) ** 2, 0);
  for (const r of rows) {
    const [n, t] = point(r, "sim");
    const e = t / (my + slope * (n - mx)) - 1;
    console.log((Math.abs(e) <= 0.15 ? "ok" : "FAIL") + ` time per token at ${r.concurrency}: ${n.toFixed(0)} ` +
                `decoding, ${(1000 * t).toFixed(1)} ms, ${(100 * e).toFixed(1)}% off the line of the source`);
  }')

# docs/sim.md's block that starts with the command is the program's output.
first='$ build/perf/source_table --derive'
expected=$(awk -v first="$first" '/^```/ { if (inside) exit; fence = 1; next }
                fence && $0 == first { inside = 1; fence = 0; next }
                { fence = 0 } inside { print }' docs/sim.md)
actual=$("$table" --derive "$goodput" 2>/dev/null)
if [ -z "$expected" ]; then
  fail "docs/sim.md has no block starting with '$first'"
elif missing=$(printf '%s\n' "$expected" | grep -vxF -f <(printf '%s\n' "$actual")); then
  fail "docs/sim.md prints lines source_table --derive no longer does (rerun it and update the doc):"
  printf '%s\n' "$missing" | head -5
else
  echo "ok: docs/sim.md's table ($(printf '%s\n' "$expected" | wc -l) lines)"
fi
exit $((failed > 0))
