# Sourced by the e2e scripts: `check NAME ACTUAL EXPECTED` counts a pass in
# $passed or prints the mismatch and counts it in $failed.
passed=0
failed=0
check() {
  if [ "$2" = "$3" ]; then passed=$((passed + 1)); else failed=$((failed + 1)); echo "FAIL: $1: got '$2', want '$3'"; fi
}
