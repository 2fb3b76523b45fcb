#!/bin/bash
# make test-deploy: deploy/kubernetes checked offline. The manifests against
# Kubernetes' OpenAPI schemas (validate.mjs), the DaemonSet's scheduling
# against GFD's and dcgm-exporter's charts (check-node-agent.mjs), the Grafana dashboard
# (check-dashboard.mjs), the Prometheus scrape config (check-scrape.mjs,
# promtool), the alerts (check-rules.mjs, promtool); and each check shown to fail on a broken input, so that none of
# them passes by checking nothing. Installs its npm packages (package-lock.json)
# with `npm ci` once per lock file into a cache kept between clones
# ($GPUENV_CI_CACHE, default ~/.cache/gpuenv-ci), linked as
# tests/kubernetes/node_modules.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
deploy=$repo/deploy/kubernetes
failures=0
passes=0
work=$(mktemp -d /tmp/gpuenv-deploy-test.XXXXXX)
trap 'rm -rf "$work"' EXIT

say() { echo "test-deploy: $*"; }
pass() { say "ok   $*"; passes=$((passes + 1)); }
fail() { say "FAIL $*"; failures=$((failures + 1)); }

# ---- node_modules: npm ci once per package-lock.json, kept between clones
lock_id=$(sha256sum "$here/package-lock.json" | cut -c1-16)
modules=${GPUENV_CI_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/gpuenv-ci}/node_modules-$lock_id
if [ ! -d "$modules/node_modules" ]; then
  say "npm ci (tests/kubernetes/package-lock.json) into $modules"
  staging=$(mktemp -d "${modules%/*}/.staging.XXXXXX" 2>/dev/null || { mkdir -p "${modules%/*}" && mktemp -d "${modules%/*}/.staging.XXXXXX"; })
  cp "$here/package.json" "$here/package-lock.json" "$staging/"
  (cd "$staging" && npm ci --no-audit --no-fund --loglevel=error) || { rm -rf "$staging"; fail "npm ci"; exit 1; }
  mv -T "$staging" "$modules" 2>/dev/null || rm -rf "$staging"  # another run may have made it first
fi
if [ -d "$here/node_modules" ] && [ ! -L "$here/node_modules" ]; then rm -rf "$here/node_modules"; fi
ln -sfn "$modules/node_modules" "$here/node_modules"

expect_ok() {  # expect_ok WHAT COMMAND...
  local what=$1; shift
  if out=$("$@" 2>&1); then pass "$what"; else fail "$what"; echo "$out"; fi
}
expect_fail() {  # expect_fail WHAT TEXT COMMAND...: COMMAND fails and says TEXT
  local what=$1 text=$2; shift 2
  if out=$("$@" 2>&1); then fail "$what: it passed"; return; fi
  case $out in
    *"$text"*) pass "$what" ;;
    *) fail "$what: [$text] not in the output"; echo "$out" ;;
  esac
}

# ---- the manifests
manifests=("$deploy/daemonset.yaml" "$deploy/servicemonitor.yaml" "$deploy/prometheusrule.yaml" "$deploy/pytorchjob.yaml" "$deploy/jobset.yaml" "$deploy/trainjob.yaml")
expect_ok "manifests match the Kubernetes 1.32 schemas: ${manifests[*]##*/}" node "$here/validate.mjs" "${manifests[@]}"
for bad in "$here"/bad/*.yaml; do
  text=$(sed -n '1s/^# expect: //p' "$bad")
  expect_fail "rejected: bad/${bad##*/}" "$text" node "$here/validate.mjs" "$bad"
done
# The real DaemonSet with one field misspelt deep in its pod template.
sed 's/readOnlyRootFilesystem: true/readOnlyRootFileSystem: true/' "$deploy/daemonset.yaml" >"$work/daemonset.yaml"
expect_fail "rejected: daemonset.yaml with readOnlyRootFileSystem" '"readOnlyRootFileSystem"' node "$here/validate.mjs" "$work/daemonset.yaml"

# The TrainJob's runtime with one field misspelt in the pod template it embeds,
# and a TrainJob field Trainer v2 does not have.
sed 's/runtimeClassName: nvidia/runtimeClassNames: nvidia/' "$deploy/trainjob.yaml" >"$work/trainjob-pod.yaml"
expect_fail "rejected: trainjob.yaml's runtime with runtimeClassNames" '"runtimeClassNames"' node "$here/validate.mjs" "$work/trainjob-pod.yaml"
sed 's/numProcPerNode: 8/nprocPerNode: 8/' "$deploy/trainjob.yaml" >"$work/trainjob-field.yaml"
expect_fail "rejected: a TrainJob with PyTorchJob's nprocPerNode" '"nprocPerNode"' node "$here/validate.mjs" "$work/trainjob-field.yaml"

# ---- the DaemonSet schedules as GFD's and dcgm-exporter's charts do
expect_ok "node agent: priority class and tolerations of GFD's and dcgm-exporter's charts" node "$here/check-node-agent.mjs" "$deploy/daemonset.yaml"
sed '/priorityClassName: system-node-critical/d' "$deploy/daemonset.yaml" >"$work/no-priority.yaml"
expect_fail "node agent rejects: no priority class" 'priorityClassName is unset' node "$here/check-node-agent.mjs" "$work/no-priority.yaml"
sed 's/key: CriticalAddonsOnly/key: CriticalAddons/' "$deploy/daemonset.yaml" >"$work/no-critical-addons.yaml"
expect_fail "node agent rejects: no CriticalAddonsOnly toleration" '"CriticalAddonsOnly"' node "$here/check-node-agent.mjs" "$work/no-critical-addons.yaml"
sed 's/effect: NoSchedule/effect: NoExecute/' "$deploy/daemonset.yaml" >"$work/gpu-taint-effect.yaml"
expect_fail "node agent rejects: the nvidia.com/gpu toleration for another effect" '"nvidia.com/gpu"' node "$here/check-node-agent.mjs" "$work/gpu-taint-effect.yaml"

# ---- the restricted Pod Security profile: the training jobs pass; each rule
# is shown to fire on a broken copy of pytorchjob.yaml
jobs=("$deploy/pytorchjob.yaml" "$deploy/jobset.yaml" "$deploy/trainjob.yaml")
expect_ok "restricted profile: pytorchjob.yaml, jobset.yaml, trainjob.yaml" node "$here/check-restricted.mjs" "${jobs[@]}"
sed 's/runAsNonRoot: true/runAsNonRoot: false/' "$deploy/trainjob.yaml" >"$work/trainjob-root.yaml"
expect_fail "restricted profile rejects: trainjob.yaml's runtime as root" 'runAsNonRoot is not true' node "$here/check-restricted.mjs" "$work/trainjob-root.yaml"
restricted_mutant() {  # restricted_mutant NAME SED TEXT
  sed "$2" "$deploy/pytorchjob.yaml" >"$work/$1.yaml"
  expect_fail "restricted profile rejects: $1" "$3" node "$here/check-restricted.mjs" "$work/$1.yaml"
}
restricted_mutant escalation 's/allowPrivilegeEscalation: false/allowPrivilegeEscalation: true/' 'allowPrivilegeEscalation is not false'
restricted_mutant no-drop 's/drop: \["ALL"\]/drop: ["NET_RAW"]/' 'capabilities.drop lacks ALL'
restricted_mutant root 's/runAsUser: 1000/runAsUser: 0/' 'runAsUser is 0'
restricted_mutant maybe-root 's/runAsNonRoot: true/runAsNonRoot: false/' 'runAsNonRoot is not true'
restricted_mutant unconfined 's/type: RuntimeDefault/type: Unconfined/' 'seccompProfile.type is Unconfined'
restricted_mutant hostpath 's|emptyDir: {}|hostPath: {path: /var/cache}|' 'is a hostPath'
restricted_mutant add-cap 's/drop: \["ALL"\]/drop: ["ALL"]\n                  add: ["SYS_ADMIN"]/' 'adds capability SYS_ADMIN'
restricted_mutant host-network 's/runtimeClassName: nvidia/hostNetwork: true/' 'hostNetwork is true'
expect_fail "restricted profile: the DaemonSet's privileged labeller is not restricted" 'restricted' \
  node "$here/check-restricted.mjs" "$deploy/daemonset.yaml"

# ---- the Grafana dashboard
dash=$deploy/grafana-dashboard.json
expect_ok "grafana-dashboard.json: variables, series, PromQL" node "$here/check-dashboard.mjs" "$dash" "$repo/docs/metrics.md"
mutate() {  # mutate NAME JS: writes $work/NAME.json, the dashboard changed by JS (d is the dashboard)
  node -e "const fs=require('fs');const d=JSON.parse(fs.readFileSync(process.argv[1]));const p=d.panels.filter(x=>x.type!=='row');$2;fs.writeFileSync(process.argv[2],JSON.stringify(d))" \
    "$dash" "$work/$1.json"
}
mutate metric 'p[1].targets[0].expr=p[1].targets[0].expr.replace("gpuenv_gpu_","gpuenv_gpus_")'
expect_fail "rejected: a dashboard query on a series gpuenv does not export" "not a gpuenv series" node "$here/check-dashboard.mjs" "$work/metric.json" /nonexistent
mutate promql 'p[5].targets[0].expr+=")"'
expect_fail "rejected: a dashboard query that is not PromQL" "promtool check rules" node "$here/check-dashboard.mjs" "$work/promql.json" /nonexistent
mutate datasource 'p[3].datasource={type:"prometheus",uid:"my-prometheus"}'
expect_fail "rejected: a panel with a fixed data source" 'is not ${datasource}' node "$here/check-dashboard.mjs" "$work/datasource.json" /nonexistent
mutate mig 'p[0].targets[0].expr=p[0].targets[0].expr.replace(", mig=\"\"","")'
expect_fail "rejected: a count of GPUs that counts MIG devices" 'without mig=""' node "$here/check-dashboard.mjs" "$work/mig.json" /nonexistent
{ cat "$repo/docs/metrics.md"; echo '| `gpuenv_gpu_frobnication_ratio` | gauge | 0-1 | a series no panel draws |'; } >"$work/metrics-more.md"
expect_fail "rejected: a documented series that no panel draws" "gpuenv_gpu_frobnication_ratio: documented" node "$here/check-dashboard.mjs" "$dash" "$work/metrics-more.md"
echo '{"panels": [' >"$work/broken.json"
expect_fail "rejected: a dashboard that is not JSON" "invalid:" node "$here/check-dashboard.mjs" "$work/broken.json" /nonexistent

# ---- the Prometheus scrape config
scrape=$deploy/prometheus-scrape.yaml
expect_ok "prometheus-scrape.yaml: promtool check config" node "$here/check-scrape.mjs" "$scrape"
sed 's/action: keep/action: kep/' "$scrape" >"$work/scrape-action.yaml"
expect_fail "rejected: a scrape config with an unknown relabel action" 'unknown relabel action' node "$here/check-scrape.mjs" "$work/scrape-action.yaml"
sed 's/role: pod/role: pods/' "$scrape" >"$work/scrape-role.yaml"
expect_fail "rejected: a kubernetes_sd_config with an unknown role" 'role pods' node "$here/check-scrape.mjs" "$work/scrape-role.yaml"

# ---- the alerts
rules=$deploy/prometheusrule.yaml plain=$repo/deploy/prometheus/gpuenv-alerts.yml
expect_ok "prometheusrule.yaml: the groups of deploy/prometheus/gpuenv-alerts.yml, promtool check rules" node "$here/check-rules.mjs" "$rules" "$plain"
sed 's/for: 5m/for: 6m/' "$rules" >"$work/rule-drift.yaml"
expect_fail "rejected: a PrometheusRule that drifted from the plain rules file" 'spec.groups differ' node "$here/check-rules.mjs" "$work/rule-drift.yaml" "$plain"
sed 's/== 0$/== /' "$plain" >"$work/rules-broken.yml"
expect_fail "rejected: a rules file that is not PromQL" 'promtool check rules' node "$here/check-rules.mjs" "$rules" "$work/rules-broken.yml"

echo "test-deploy: $passes passed, $failures failed"
[ "$failures" -eq 0 ]
