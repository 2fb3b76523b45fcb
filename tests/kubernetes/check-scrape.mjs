// Checks deploy/kubernetes/prometheus-scrape.yaml with `promtool check config`.
// Debian's Prometheus is built without Kubernetes service discovery, so its
// promtool rejects kubernetes_sd_configs: those blocks are checked here
// against the fields Prometheus documents for kubernetes_sd_config, then
// replaced by a static target, and promtool checks the rest (relabelling,
// intervals, timeouts) as it would check the real file.
//
//   node check-scrape.mjs PROMETHEUS.yaml   exit 0 ok, 1 problems
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parse, stringify } from "yaml";

// prometheus.io/docs/prometheus/latest/configuration/configuration/#kubernetes_sd_config
const SD_FIELDS = new Set(["api_server", "role", "kubeconfig_file", "namespaces", "selectors", "attach_metadata",
  "basic_auth", "authorization", "oauth2", "bearer_token", "bearer_token_file", "tls_config", "proxy_url",
  "no_proxy", "proxy_from_environment", "proxy_connect_header", "follow_redirects", "enable_http2"]);
const ROLES = new Set(["node", "service", "pod", "endpoints", "endpointslice", "ingress"]);
const NAMESPACE_FIELDS = new Set(["own_namespace", "names"]);

function checkSd(job, sd, problems) {
  const where = `job ${job}: kubernetes_sd_configs`;
  for (const k of Object.keys(sd)) if (!SD_FIELDS.has(k)) problems.push(`${where}: unknown field ${k}`);
  if (!ROLES.has(sd.role)) problems.push(`${where}: role ${sd.role} is not one of ${[...ROLES].join(", ")}`);
  for (const k of Object.keys(sd.namespaces ?? {}))
    if (!NAMESPACE_FIELDS.has(k)) problems.push(`${where}: unknown field namespaces.${k}`);
  if (sd.namespaces?.names && !Array.isArray(sd.namespaces.names)) problems.push(`${where}: namespaces.names is not a list`);
}

function main([file]) {
  if (!file) {
    console.error("usage: node check-scrape.mjs PROMETHEUS.yaml");
    return 2;
  }
  const problems = [];
  const config = parse(readFileSync(file, "utf8"));
  let sds = 0;
  for (const job of config?.scrape_configs ?? []) {
    if (!job.kubernetes_sd_configs) continue;
    for (const sd of job.kubernetes_sd_configs) checkSd(job.job_name, sd, problems), sds++;
    delete job.kubernetes_sd_configs;
    job.static_configs = [{ targets: ["127.0.0.1:9400"] }];
  }
  if (sds === 0) problems.push("no kubernetes_sd_configs: the gpuenv job finds no pods");
  const dir = mkdtempSync(join(tmpdir(), "gpuenv-scrape-"));
  try {
    const copy = join(dir, "prometheus.yml");
    writeFileSync(copy, stringify(config));
    const r = spawnSync("promtool", ["check", "config", copy], { encoding: "utf8" });
    if (r.error) problems.push(`promtool: ${r.error.message} (apt-get install prometheus)`);
    else if (r.status !== 0) problems.push(`promtool check config: ${r.stdout}${r.stderr}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  for (const p of problems) console.log(`invalid: ${file}: ${p}`);
  if (!problems.length) console.log(`valid: ${file}: ${sds} kubernetes_sd_config(s), promtool check config passed`);
  return problems.length ? 1 : 0;
}

process.exitCode = main(process.argv.slice(2));
