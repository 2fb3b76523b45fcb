// Validates Kubernetes manifests offline against Kubernetes' OpenAPI schemas
// (kubernetes-models, Kubernetes 1.32; @kubernetes-models/prometheus-operator)
// twice over: at run time (types, required fields, formats), and with the
// TypeScript compiler over the same schemas' types, whose excess-property
// check rejects a field the API does not have, as `kubectl apply` (strict
// field validation) does. The custom resources' own fields are typed in
// crds.ts.
//
//   node validate.mjs FILE.yaml...   exit 0 all valid, 1 some invalid, 2 usage
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { parseAllDocuments } from "yaml";
import { Namespace } from "kubernetes-models/v1/Namespace";
import { PodTemplateSpec } from "kubernetes-models/v1/PodTemplateSpec";
import { Service } from "kubernetes-models/v1/Service";
import { ServiceAccount } from "kubernetes-models/v1/ServiceAccount";
import { DaemonSet } from "kubernetes-models/apps/v1/DaemonSet";
import { JobTemplateSpec } from "kubernetes-models/batch/v1/JobTemplateSpec";
import { ResourceRequirements } from "kubernetes-models/v1/ResourceRequirements";
import { EnvVar } from "kubernetes-models/v1/EnvVar";
import { ServiceMonitor } from "@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/ServiceMonitor";
import { PrometheusRule } from "@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/PrometheusRule";

const here = dirname(fileURLToPath(import.meta.url));

// apiVersion/kind -> the run-time check and the TypeScript type.
const KINDS = {
  "v1/Namespace": { check: (d) => new Namespace(d).validate(), type: ["INamespace", "kubernetes-models/v1/Namespace"] },
  "v1/ServiceAccount": { check: (d) => new ServiceAccount(d).validate(), type: ["IServiceAccount", "kubernetes-models/v1/ServiceAccount"] },
  "v1/Service": { check: (d) => new Service(d).validate(), type: ["IService", "kubernetes-models/v1/Service"] },
  "apps/v1/DaemonSet": { check: (d) => new DaemonSet(d).validate(), type: ["IDaemonSet", "kubernetes-models/apps/v1/DaemonSet"] },
  "monitoring.coreos.com/v1/ServiceMonitor": {
    check: (d) => new ServiceMonitor(d).validate(),
    type: ["IServiceMonitor", "@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/ServiceMonitor"],
  },
  "monitoring.coreos.com/v1/PrometheusRule": {
    check: (d) => new PrometheusRule(d).validate(),
    type: ["IPrometheusRule", "@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/PrometheusRule"],
  },
  "kubeflow.org/v1/PyTorchJob": {
    check: (d) => Object.values(d.spec?.pytorchReplicaSpecs ?? {}).forEach((r) => new PodTemplateSpec(r.template).validate()),
    type: ["IPyTorchJob", "../crds"],
  },
  "jobset.x-k8s.io/v1alpha2/JobSet": {
    check: (d) => (d.spec?.replicatedJobs ?? []).forEach((r) => new JobTemplateSpec(r.template).validate()),
    type: ["IJobSet", "../crds"],
  },
  "trainer.kubeflow.org/v1alpha1/TrainingRuntime": {
    check: (d) => (d.spec?.template?.spec?.replicatedJobs ?? []).forEach((r) => new JobTemplateSpec(r.template).validate()),
    type: ["ITrainingRuntime", "../crds"],
  },
  "trainer.kubeflow.org/v1alpha1/ClusterTrainingRuntime": {
    check: (d) => (d.spec?.template?.spec?.replicatedJobs ?? []).forEach((r) => new JobTemplateSpec(r.template).validate()),
    type: ["ITrainingRuntime", "../crds"],
  },
  "trainer.kubeflow.org/v1alpha1/TrainJob": {
    check: (d) => {
      const t = d.spec?.trainer ?? {};
      if (t.resourcesPerNode) new ResourceRequirements(t.resourcesPerNode).validate();
      (t.env ?? []).forEach((e) => new EnvVar(e).validate());
    },
    type: ["ITrainJob", "../crds"],
  },
};

// Each document of each file, or a problem naming the file.
function load(files, problems) {
  const docs = [];
  for (const file of files) {
    let text;
    try {
      text = readFileSync(file, "utf8");
    } catch (e) {
      problems.push(`${file}: cannot read it: ${e.message}`);
      continue;
    }
    parseAllDocuments(text).forEach((doc, i) => {
      const where = `${file}, document ${i + 1}`;
      if (doc.errors.length) return problems.push(`${where}: not YAML: ${doc.errors[0].message}`);
      const data = doc.toJS();
      if (data === null || data === undefined) return;
      docs.push({ where, data });
    });
  }
  return docs;
}

function kindOf(data) {
  return `${data.apiVersion}/${data.kind}`;
}

function runtimeCheck(docs, problems) {
  for (const { where, data } of docs) {
    const kind = KINDS[kindOf(data)];
    if (!kind) {
      problems.push(`${where}: no schema for ${kindOf(data)}; add it to KINDS in tests/kubernetes/validate.mjs`);
      continue;
    }
    try {
      kind.check(data);
    } catch (e) {
      problems.push(`${where} (${data.kind} ${data.metadata?.name}): ${e.message}`);
    }
  }
}

// One generated .ts file per document, `const doc: Type = <document>;`, compiled
// without emitting: unknown fields and wrong types are compile errors.
function typeCheck(docs, problems) {
  const gen = mkdtempSync(join(here, ".gen-"));
  try {
    const origin = new Map();
    docs.forEach(({ where, data }, i) => {
      const kind = KINDS[kindOf(data)];
      if (!kind) return;
      const [type, from] = kind.type;
      const file = join(gen, `doc${i}.ts`);
      writeFileSync(file, `import type { ${type} } from "${from}";\nexport const doc: ${type} = ${JSON.stringify(data, null, 2)};\n`);
      origin.set(file, { where, data });
    });
    const options = { noEmit: true, strict: true, skipLibCheck: true, target: ts.ScriptTarget.ES2020,
                      module: ts.ModuleKind.CommonJS, moduleResolution: ts.ModuleResolutionKind.Node10 };
    const program = ts.createProgram([...origin.keys()], options);
    for (const d of ts.getPreEmitDiagnostics(program)) {
      const doc = d.file && origin.get(d.file.fileName);
      const text = ts.flattenDiagnosticMessageText(d.messageText, "\n  ");
      if (!doc) {
        problems.push(`typescript: ${text}`);
        continue;
      }
      const line = d.file.getLineAndCharacterOfPosition(d.start ?? 0).line;
      const near = d.file.text.split("\n")[line].trim();
      problems.push(`${doc.where} (${doc.data.kind} ${doc.data.metadata?.name}): ${text}\n  at: ${near}`);
    }
  } finally {
    rmSync(gen, { recursive: true, force: true });
  }
}

function main(files) {
  if (files.length === 0) {
    console.error("usage: node validate.mjs FILE.yaml...");
    return 2;
  }
  const problems = [];
  const docs = load(files, problems);
  runtimeCheck(docs, problems);
  typeCheck(docs, problems);
  for (const p of problems) console.log(`invalid: ${p}`);
  if (problems.length === 0) console.log(`valid: ${docs.length} documents in ${files.map((f) => basename(f)).join(", ")}`);
  return problems.length ? 1 : 0;
}

process.exitCode = main(process.argv.slice(2));
