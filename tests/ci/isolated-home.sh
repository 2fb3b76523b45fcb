#!/bin/bash
# isolated-home.sh COMMAND...: runs COMMAND (a test suite) with HOME and the
# XDG directories pointing into an empty temporary directory, then fails if
# gpuenv's directories in the real home (cache, store, config, data) changed:
# tests write only under their own temporary directories.
set -uo pipefail

real_home=${HOME:-/root}
fake=$(mktemp -d /tmp/gpuenv-test-home.XXXXXX) || exit 1
trap 'rm -rf "$fake"' EXIT
watched=("$real_home/.cache/gpuenv" "$real_home/.local/share/gpuenv" "$real_home/.local/state/gpuenv"
         "$real_home/.config/gpuenv" "${XDG_CACHE_HOME:-$real_home/.cache}/gpuenv")

# listing: every path under the watched directories, with its size and mtime.
listing() {
  for d in "${watched[@]}"; do
    [ -e "$d" ] && find "$d" -printf '%p %s %T@\n' 2>/dev/null
  done | sort -u
}

before=$(listing)
# pyenv's shims find their root through HOME: keep the real one.
[ -d "$real_home/.pyenv" ] && export PYENV_ROOT=${PYENV_ROOT:-$real_home/.pyenv}
HOME=$fake XDG_CACHE_HOME=$fake/.cache XDG_CONFIG_HOME=$fake/.config XDG_DATA_HOME=$fake/.local/share \
  XDG_STATE_HOME=$fake/.local/state "$@"
rc=$?
after=$(listing)
if [ "$before" != "$after" ]; then
  echo "isolated-home: the tests wrote into the real home's gpuenv directories:"
  diff <(echo "$before") <(echo "$after") | sed -n 's/^> /  /p' | head -n 20
  exit 1
fi
exit $rc
