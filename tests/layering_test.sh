#!/usr/bin/env bash
# The layering rule of the README's architecture table, checked on the code:
# each folder under src/ may include only its own headers and those of the
# folders listed below it in the table (a row of several folders is read left
# to right, top to bottom). Tests (*_test.cc) are left out: they may use
# tests/support. A folder missing from the table fails too.
# Usage: layering_test.sh SOURCE_DIR
set -u
root="$1"
# The table's folders in order, top first: "| `cli/` |" and "| `hw/`, `workload/`, `model/` |".
order=$(awk '/^## Architecture/ { on = 1 } on && /^\| `[a-z_]+\/`/ {
    n = split($0, cells, "|"); m = split(cells[2], names, ","); for (i = 1; i <= m; i++) {
      gsub(/[ `\/]/, "", names[i]); print names[i] } }
  on && /^## / && !/Architecture/ { exit }' "$root/README.md")
rank() { echo "$order" | grep -nx "$1" | cut -d: -f1; }
failed=0
checked=0
for dir in "$root"/src/*/; do
  folder=$(basename "$dir")
  own=$(rank "$folder")
  if [ -z "$own" ]; then
    echo "FAIL: src/$folder/ is not in the README's architecture table"
    failed=$((failed + 1))
    continue
  fi
  for file in "$dir"*.h "$dir"*.cc; do
    [ -e "$file" ] || continue
    case "$file" in *_test.cc) continue ;; esac
    while read -r used; do
      [ "$used" = "$folder" ] && continue
      [ -d "$root/src/$used" ] || continue
      checked=$((checked + 1))
      theirs=$(rank "$used")
      if [ -z "$theirs" ] || [ "$theirs" -le "$own" ]; then
        echo "FAIL: ${file#$root/} includes $used/, which the table lists above $folder/ (or not at all)"
        failed=$((failed + 1))
      fi
    done < <(sed -n 's/^#include "\([a-z_]*\)\/.*/\1/p' "$file" | sort -u)
  done
done
echo "$checked cross-folder includes checked, $failed failed"
[ "$failed" -eq 0 ] && [ "$checked" -gt 0 ]
