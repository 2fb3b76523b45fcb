#!/bin/bash
# ctest fleet.jobs_dashboard: deploy/kubernetes/grafana-jobs-dashboard.json
# through tests/kubernetes/check-dashboard.mjs (its variables, every
# gpuenv_job_* selector filtered by node and user, exactly the per-job series,
# valid PromQL), and each of those checks shown to fail on a broken copy, so
# that none passes by checking nothing. (make test-deploy's run.sh checks the
# GPU dashboard the same way.) Needs node and promtool; writes only under
# its own temp dir.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
dash=$repo/deploy/kubernetes/grafana-jobs-dashboard.json
check=$repo/tests/kubernetes/check-dashboard.mjs
docs=$repo/docs/metrics.md
work=$(mktemp -d /tmp/gpuenv-jobs-dashboard.XXXXXX)
trap 'rm -rf "$work"' EXIT
failures=0
for tool in node promtool; do
  command -v "$tool" >/dev/null || { echo "FAIL: no $tool (make deps installs nodejs and prometheus)"; exit 1; }
done

expect_ok() {
  if out=$(node "$check" "$1" "$docs" 2>&1); then echo "ok   $out"; else echo "FAIL $1: $out"; failures=$((failures + 1)); fi
}
mutant() {  # mutant NAME JS TEXT: the dashboard changed by JS (p: its panels) is refused, saying TEXT
  node -e "const fs=require('fs');const d=JSON.parse(fs.readFileSync(process.argv[1]));const p=d.panels.filter(x=>x.type!=='row');$2;fs.writeFileSync(process.argv[2],JSON.stringify(d))" \
    "$dash" "$work/$1.json" || { echo "FAIL $1: could not make it"; failures=$((failures + 1)); return; }
  if out=$(node "$check" "$work/$1.json" "$docs" 2>&1); then
    echo "FAIL $1: passed"; failures=$((failures + 1))
  elif [[ $out != *"$3"* ]]; then
    echo "FAIL $1: [$3] not in: $out"; failures=$((failures + 1))
  else
    echo "ok   rejected: $1"
  fi
}

expect_ok "$dash"
mutant no-user-filter 'p[0].targets[0].expr=p[0].targets[0].expr.replace(", user=~\"$user\"","")' 'does not filter by user=~"$user"'
mutant old-host-label 'p[0].targets[0].expr=p[0].targets[0].expr.replaceAll("hostname=~","Hostname=~")' 'does not filter by hostname=~"$node"'
mutant gpu-series 'p[2].targets[0].expr="gpuenv_gpu_up{hostname=~\"$node\", user=~\"$user\"}"' 'not a per-job gpuenv series'
mutant no-processes 'd.panels=d.panels.filter(x=>!x.targets?.some(t=>t.expr.includes("gpuenv_job_processes")))' 'gpuenv_job_processes: no panel draws it'
mutant not-promql 'p[1].targets[0].expr+=")"' 'promtool check rules'
mutant fixed-datasource 'p[3].datasource={type:"prometheus",uid:"my-prometheus"}' 'is not ${datasource}'
mutant no-user-variable 'd.templating.list=d.templating.list.filter(v=>v.name!=="user")' 'no user variable'
[ "$failures" -eq 0 ]
