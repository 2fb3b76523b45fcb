#!/bin/sh
# A fuzzer started with no seeds must find new coverage inside the code it
# tests: with the core library built without coverage instrumentation
# (-fsanitize=fuzzer-no-link), libFuzzer sees only the harness's few edges
# and its coverage stays flat. Usage: fuzz_coverage.sh FUZZER MIN_GROWTH
set -u
fuzzer=$1
min_growth=$2
work=$(mktemp -d) || exit 1
trap 'rm -rf "$work"' EXIT
mkdir "$work/corpus"
"$fuzzer" -seed=1 -runs=20000 -rss_limit_mb=2048 -timeout=10 "$work/corpus" >"$work/log" 2>&1 || {
  cat "$work/log"; echo "fuzz_coverage: $fuzzer failed"; exit 1; }
first=$(sed -n 's/.*INITED cov: \([0-9]*\).*/\1/p' "$work/log" | head -n1)
last=$(sed -n 's/.*DONE *cov: \([0-9]*\).*/\1/p' "$work/log" | tail -n1)
[ -n "$first" ] && [ -n "$last" ] || { cat "$work/log"; echo "fuzz_coverage: no coverage figures in the log"; exit 1; }
echo "fuzz_coverage: $fuzzer from no seeds: cov $first at start, $last after 20000 runs"
[ $((last - first)) -ge "$min_growth" ] || {
  echo "fuzz_coverage: coverage grew by $((last - first)), under $min_growth: is the code under test instrumented?"; exit 1; }
