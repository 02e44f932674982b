#!/bin/sh
# The house style's one hard rule (.clang-format: Google at 120 columns): no
# line of C++ under src/, tests/ or perf/ is longer than 120 columns. A long
# line is reformatted with `clang-format --lines=N:N -i FILE`.
root=${1:-.}
long=$(find "$root/src" "$root/tests" "$root/perf" \( -name '*.cc' -o -name '*.h' \) -print0 |
  xargs -0 awk 'length > 120 {print FILENAME ":" FNR ": " length " columns"}')
if [ -n "$long" ]; then
  echo "lines over 120 columns:"
  echo "$long"
  exit 1
fi
echo "no line over 120 columns"
