#!/bin/bash
# make test, stage by stage: each stage is `make STAGE`; at the end (also
# after a failure) a table of each stage's minutes, and every test ctest
# skipped, by name. Under CI (CI=true, which .ci/run sets) a skip is a
# failure unless tests/ci/allowed-skips.txt names the test and why the CI
# machine cannot run it: a prerequisite that `make deps` installs is never
# an excuse.
#
#   tests/ci/stages.sh STAGE...
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
make=${MAKE:-make}
names=() minutes=() results=()
rc=0

elapsed() { local s=$1; printf '%d min %02d s' $((s / 60)) $((s % 60)); }

# skipped BUILD_DIR: the tests ctest's last run in BUILD_DIR skipped, one a line.
skipped() {
  local junit=$1/ctest-junit.xml
  [ -f "$junit" ] || return 0
  grep -o '<testcase name="[^"]*"[^>]*status="notrun"' "$junit" | sed 's/<testcase name="\([^"]*\)".*/\1/'
}

for stage in "$@"; do
  start=$SECONDS
  echo "==== $stage"
  $make --no-print-directory "$stage"
  code=$?
  names+=("$stage") minutes+=("$(elapsed $((SECONDS - start)))")
  if [ $code -ne 0 ]; then results+=("FAIL ($code)"); rc=$code; break; fi
  results+=("ok")
done

echo
echo "==== make test: each stage"
for i in "${!names[@]}"; do printf '%-12s %-14s %s\n' "${names[$i]}" "${minutes[$i]}" "${results[$i]}"; done
printf '%-12s %s\n' "total" "$(elapsed $SECONDS)"

unallowed=0
for build in "$repo/build" "$repo/build-asan"; do
  while read -r test; do
    [ -n "$test" ] || continue
    if grep -qxF "$test" <(sed -n 's/^\([^ #][^ ]*\) .*/\1/p' "$here/allowed-skips.txt"); then
      echo "skipped: $test (${build##*/}; allowed: tests/ci/allowed-skips.txt)"
    else
      echo "skipped: $test (${build##*/})"
      unallowed=$((unallowed + 1))
    fi
  done < <(skipped "$build")
done
if [ "${CI:-}" = true ] && [ $unallowed -gt 0 ] && [ $rc -eq 0 ]; then
  echo "make test: $unallowed test(s) skipped under CI; a skip here is a failure (tests/ci/allowed-skips.txt lists the few the CI machine cannot run)"
  rc=1
fi
exit $rc
