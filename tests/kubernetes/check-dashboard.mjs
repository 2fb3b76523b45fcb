// Checks deploy/kubernetes's Grafana dashboards. grafana-dashboard.json (the
// GPUs): it parses; it has a Prometheus data-source variable that every panel
// and query uses, and node and gpu variables that every gpuenv_gpu_* selector
// filters by; it draws exactly the series in dashboard-metrics.txt, which are
// exactly the gpuenv_ series docs/metrics.md documents in its tables (less the
// per-job gpuenv_job_* ones, which the jobs dashboard draws); and every query
// is valid PromQL (`promtool check rules` over a rules file made of the
// queries, with Grafana's variables filled in). grafana-jobs-dashboard.json
// (uid gpuenv-jobs): the same data source, node and user variables that every
// gpuenv_job_* selector filters by (hostname=~"$node", user=~"$user"), exactly
// the per-job series below drawn, each named in docs/metrics.md and every
// gpuenv_job_ name there among them, and valid PromQL.
//
//   node check-dashboard.mjs DASHBOARD.json METRICS_MD   exit 0 ok, 1 problems
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const problems = [];

// The per-job series of `gpuenv export` (issue 38; docs/metrics.md, "Jobs"):
// what the jobs dashboard draws, every one.
const JOB_SERIES = [
  "gpuenv_job_gpu_seconds_total", "gpuenv_job_energy_joules_total", "gpuenv_job_gpu_shared",
  "gpuenv_job_gpu_utilization_ratio", "gpuenv_job_sm_active_ratio", "gpuenv_job_tensor_active_ratio",
  "gpuenv_job_fp32_active_ratio", "gpuenv_job_fp16_active_ratio", "gpuenv_job_memory_used_bytes",
  "gpuenv_job_memory_peak_bytes", "gpuenv_job_cpu_cores_used", "gpuenv_job_cpu_cores_allowed",
  "gpuenv_job_processes", "gpuenv_job_start_timestamp_seconds", "gpuenv_job_verdict",
];
const isJobs = (dash) => dash.uid === "gpuenv-jobs";

function listed() {
  return readFileSync(join(here, "dashboard-metrics.txt"), "utf8")
    .split("\n").map((l) => l.trim()).filter((l) => l && !l.startsWith("#"));
}

function panelsOf(dash) {
  return dash.panels.flatMap((p) => [p, ...(p.panels ?? [])]).filter((p) => p.type !== "row");
}

function checkVariables(dash) {
  const vars = Object.fromEntries((dash.templating?.list ?? []).map((v) => [v.name, v]));
  const ds = vars.datasource;
  if (!ds || ds.type !== "datasource" || ds.query !== "prometheus")
    problems.push("no datasource variable of type datasource for prometheus");
  const [names, series] = isJobs(dash) ? [["node", "user"], /gpuenv_job_\w+/] : [["node", "gpu"], /gpuenv_\w+/];
  for (const name of names)
    if (!vars[name] || vars[name].type !== "query" || !series.test(vars[name].definition ?? ""))
      problems.push(`no ${name} variable querying a ${series.source.replace("\\w+", "")} series`);
}

// The matchers a selector of `name` must have.
function filters(dash, name) {
  if (isJobs(dash)) return ['hostname=~"$node"', 'user=~"$user"'];
  return name.startsWith("gpuenv_gpu_") ? ['node=~"$node"', 'gpu=~"$gpu"'] : ['node=~"$node"'];
}

function checkPanel(dash, p) {
  const uses = (x) => x?.uid === "${datasource}";
  if (!uses(p.datasource)) problems.push(`panel "${p.title}": its datasource is not \${datasource}`);
  if (!p.targets?.length) problems.push(`panel "${p.title}": no query`);
  for (const t of p.targets ?? []) {
    if (!uses(t.datasource)) problems.push(`panel "${p.title}" query ${t.refId}: its datasource is not \${datasource}`);
    // A count of GPUs must leave out the MIG devices, whose gpuenv_gpu_up
    // series stand beside their GPU's.
    if (/\b(sum|count)\s*\(\s*gpuenv_gpu_up\b/.test(t.expr) && !t.expr.includes('mig=""'))
      problems.push(`panel "${p.title}": counts gpuenv_gpu_up without mig="" (MIG devices are not GPUs)`);
    for (const sel of t.expr.match(/gpuenv_\w+(\{[^}]*\})?/g) ?? []) {
      for (const n of filters(dash, sel))
        if (!sel.includes(n)) problems.push(`panel "${p.title}": ${sel} does not filter by ${n}`);
    }
  }
}

function readDoc(metricsMd) {
  if (existsSync(metricsMd)) return readFileSync(metricsMd, "utf8");
  problems.push(`${metricsMd}: missing (it documents every series the exporter serves)`);
  return null;
}

function checkNames(exprs, metricsMd) {
  const want = new Set(listed());
  const used = new Set(exprs.flatMap((e) => e.match(/gpuenv_\w+/g) ?? []));
  for (const m of used) if (!want.has(m)) problems.push(`${m}: not a gpuenv series (dashboard-metrics.txt)`);
  for (const m of want) if (!used.has(m)) problems.push(`${m}: no panel draws it`);
  const doc = readDoc(metricsMd);
  if (doc === null) return;
  for (const m of want) if (!new RegExp(`\\b${m}\\b`).test(doc)) problems.push(`${m}: not in ${metricsMd}`);
  // Every series the exporter documents (a table row "| `gpuenv_...") is drawn;
  // the per-job ones by grafana-jobs-dashboard.json.
  for (const [, m] of doc.matchAll(/^\| `(gpuenv_\w+)/gm))
    if (!want.has(m) && !m.startsWith("gpuenv_job_"))
      problems.push(`${m}: documented in ${metricsMd} but not in dashboard-metrics.txt: add a panel`);
}

function checkJobNames(exprs, metricsMd) {
  const want = new Set(JOB_SERIES);
  const used = new Set(exprs.flatMap((e) => e.match(/gpuenv_\w+/g) ?? []));
  for (const m of used) if (!want.has(m)) problems.push(`${m}: not a per-job gpuenv series (check-dashboard.mjs JOB_SERIES)`);
  for (const m of want) if (!used.has(m)) problems.push(`${m}: no panel draws it`);
  const doc = readDoc(metricsMd);
  if (doc === null) return;
  for (const m of want) if (!new RegExp(`\\b${m}\\b`).test(doc)) problems.push(`${m}: not in ${metricsMd}`);
  for (const [m] of doc.matchAll(/\bgpuenv_job_\w+/g))
    if (!want.has(m)) problems.push(`${m}: documented in ${metricsMd} but not in JOB_SERIES: add a panel`);
}

function checkPromql(exprs) {
  const dir = mkdtempSync(join(tmpdir(), "gpuenv-dashboard-"));
  try {
    const fill = (e) =>
      e.replaceAll("$__rate_interval", "5m").replaceAll("$__range", "1d").replaceAll("$__interval", "15s")
        .replaceAll("$node", ".*").replaceAll("$gpu", ".*").replaceAll("$user", ".*");
    const rules = exprs.map((e, i) => `      - record: gpuenv:dashboard_query_${i}\n        expr: ${JSON.stringify(fill(e))}`);
    const file = join(dir, "queries.yaml");
    writeFileSync(file, `groups:\n  - name: dashboard\n    rules:\n${rules.join("\n")}\n`);
    const r = spawnSync("promtool", ["check", "rules", file], { encoding: "utf8" });
    if (r.error) problems.push(`promtool: ${r.error.message} (apt-get install prometheus)`);
    else if (r.status !== 0) problems.push(`promtool check rules: ${r.stdout}${r.stderr}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function main([file, metricsMd]) {
  if (!file || !metricsMd) {
    console.error("usage: node check-dashboard.mjs DASHBOARD.json METRICS_MD");
    return 2;
  }
  let dash;
  try {
    dash = JSON.parse(readFileSync(file, "utf8"));
  } catch (e) {
    console.log(`invalid: ${file}: ${e.message}`);
    return 1;
  }
  checkVariables(dash);
  const panels = panelsOf(dash);
  panels.forEach((p) => checkPanel(dash, p));
  const exprs = panels.flatMap((p) => (p.targets ?? []).map((t) => t.expr));
  (isJobs(dash) ? checkJobNames : checkNames)(exprs, metricsMd);
  checkPromql(exprs);
  for (const p of problems) console.log(`invalid: ${file}: ${p}`);
  if (!problems.length) console.log(`valid: ${file}: ${panels.length} panels, ${exprs.length} queries`);
  return problems.length ? 1 : 0;
}

process.exitCode = main(process.argv.slice(2));
