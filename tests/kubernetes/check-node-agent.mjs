// Checks that each DaemonSet is scheduled as NVIDIA's own node agents are:
// the priority class and the tolerations of GPU Feature Discovery's Helm
// chart (NVIDIA/k8s-device-plugin, deployments/helm/nvidia-device-plugin/
// values.yaml: priorityClassName, tolerations) and dcgm-exporter's
// (NVIDIA/dcgm-exporter, deployment/values.yaml's tolerations, empty by
// default, and deployment/examples/gpu-tainted-nodes-patch.yaml, the
// toleration it documents for GPU nodes tainted nvidia.com/gpu:NoSchedule).
//
//   node check-node-agent.mjs FILE.yaml...   exit 0 all pass, 1 a problem, 2 usage
import { readFileSync } from "node:fs";
import { basename } from "node:path";
import { parseAllDocuments } from "yaml";

const PRIORITY_CLASS = "system-node-critical";  // GFD's chart
const TOLERATIONS = [
  { key: "CriticalAddonsOnly", operator: "Exists" },  // GFD's chart
  { key: "nvidia.com/gpu", operator: "Exists", effect: "NoSchedule" },  // GFD's chart, dcgm-exporter's patch
];

// A toleration of the pod that tolerates at least what `want` does.
function tolerates(tolerations, want) {
  return tolerations.some((t) => t.key === want.key && t.operator === want.operator &&
    (t.effect === undefined || t.effect === want.effect) && t.value === undefined);
}

function problems(doc) {
  const spec = doc.spec?.template?.spec ?? {};
  const out = [];
  if (spec.priorityClassName !== PRIORITY_CLASS)
    out.push(`priorityClassName is ${spec.priorityClassName ?? "unset"}, not ${PRIORITY_CLASS}`);
  for (const want of TOLERATIONS)
    if (!tolerates(spec.tolerations ?? [], want)) out.push(`no toleration ${JSON.stringify(want)}`);
  return out;
}

function main(files) {
  if (files.length === 0) {
    console.error("usage: node check-node-agent.mjs FILE.yaml...");
    return 2;
  }
  let agents = 0, bad = 0;
  for (const file of files)
    for (const doc of parseAllDocuments(readFileSync(file, "utf8")).map((d) => d.toJS()).filter(Boolean)) {
      if (doc.kind !== "DaemonSet") continue;
      agents++;
      for (const p of problems(doc)) {
        console.log(`node-agent: ${basename(file)} DaemonSet ${doc.metadata?.name}: ${p}`);
        bad++;
      }
    }
  if (agents === 0) {
    console.log(`node-agent: no DaemonSet in ${files.map((f) => basename(f)).join(", ")}`);
    return 1;
  }
  if (!bad) console.log(`node-agent: ${agents} DaemonSets schedule as GFD's and dcgm-exporter's charts do`);
  return bad ? 1 : 0;
}

process.exitCode = main(process.argv.slice(2));
