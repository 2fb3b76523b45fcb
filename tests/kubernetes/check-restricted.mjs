// Checks every pod template in Kubernetes manifests against the Pod Security
// Standards' "restricted" profile (which includes "baseline"), written from
// its documented controls (kubernetes.io/docs/concepts/security/
// pod-security-standards, Kubernetes 1.32). Pods, DaemonSets, Deployments,
// Jobs, PyTorchJobs, JobSets and Trainer's (Cluster)TrainingRuntimes (the pods
// a TrainJob gets); every container, init container and
// ephemeral container. What it cannot see (AppArmor annotations, Windows)
// it checks where the fields are.
//
//   node check-restricted.mjs FILE.yaml...   exit 0 all pass, 1 a violation, 2 usage
import { readFileSync } from "node:fs";
import { basename } from "node:path";
import { parseAllDocuments } from "yaml";

const BASELINE_CAPS = new Set(["AUDIT_WRITE", "CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "KILL", "MKNOD",
  "NET_BIND_SERVICE", "SETFCAP", "SETGID", "SETPCAP", "SETUID", "SYS_CHROOT"]);
const SAFE_SYSCTLS = new Set(["kernel.shm_rmid_forced", "net.ipv4.ip_local_port_range",
  "net.ipv4.ip_unprivileged_port_start", "net.ipv4.tcp_syncookies", "net.ipv4.ping_group_range",
  "net.ipv4.ip_local_reserved_ports", "net.ipv4.tcp_keepalive_time", "net.ipv4.tcp_fin_timeout",
  "net.ipv4.tcp_keepalive_intvl", "net.ipv4.tcp_keepalive_probes"]);
const SELINUX_TYPES = new Set(["", "container_t", "container_init_t", "container_kvm_t", "container_engine_t"]);
const RESTRICTED_VOLUMES = new Set(["configMap", "csi", "downwardAPI", "emptyDir", "ephemeral",
  "persistentVolumeClaim", "projected", "secret"]);

// [where, pod spec] for each pod template of a document.
function podSpecs(doc) {
  const s = doc.spec ?? {};
  switch (doc.kind) {
    case "Pod": return [["", s]];
    case "DaemonSet": case "Deployment": case "StatefulSet": case "ReplicaSet": case "Job":
      return [["spec.template", s.template?.spec ?? {}]];
    case "CronJob": return [["spec.jobTemplate", s.jobTemplate?.spec?.template?.spec ?? {}]];
    case "PyTorchJob":
      return Object.entries(s.pytorchReplicaSpecs ?? {}).map(([r, v]) => [`replica ${r}`, v.template?.spec ?? {}]);
    case "JobSet":
      return (s.replicatedJobs ?? []).map((r) => [`replicatedJob ${r.name}`, r.template?.spec?.template?.spec ?? {}]);
    case "TrainingRuntime": case "ClusterTrainingRuntime":
      return (s.template?.spec?.replicatedJobs ?? []).map((r) => [`replicatedJob ${r.name}`, r.template?.spec?.template?.spec ?? {}]);
    default: return [];
  }
}

function seLinuxProblems(opts, where, out) {
  if (!opts) return;
  if (!SELINUX_TYPES.has(opts.type ?? "")) out.push(`${where}.seLinuxOptions.type is ${opts.type} (baseline)`);
  if (opts.user) out.push(`${where}.seLinuxOptions.user is set (baseline)`);
  if (opts.role) out.push(`${where}.seLinuxOptions.role is set (baseline)`);
}

function appArmorProblem(p, where, out) {
  if (p && !["RuntimeDefault", "Localhost"].includes(p.type)) out.push(`${where}.appArmorProfile.type is ${p.type} (baseline)`);
}

// The violations of one pod spec, each naming the field and the profile.
export function violations(spec) {
  const out = [];
  const psc = spec.securityContext ?? {};
  for (const f of ["hostNetwork", "hostPID", "hostIPC"]) if (spec[f]) out.push(`${f} is true (baseline)`);
  if (psc.windowsOptions?.hostProcess) out.push("securityContext.windowsOptions.hostProcess (baseline)");
  seLinuxProblems(psc.seLinuxOptions, "securityContext", out);
  appArmorProblem(psc.appArmorProfile, "securityContext", out);
  if (psc.seccompProfile && !["RuntimeDefault", "Localhost"].includes(psc.seccompProfile.type))
    out.push(`securityContext.seccompProfile.type is ${psc.seccompProfile.type} (restricted: RuntimeDefault or Localhost)`);
  for (const s of psc.sysctls ?? []) if (!SAFE_SYSCTLS.has(s.name)) out.push(`sysctl ${s.name} is not in the safe set (baseline)`);
  if (psc.runAsUser === 0) out.push("securityContext.runAsUser is 0 (restricted)");
  for (const v of spec.volumes ?? []) {
    const type = Object.keys(v).find((k) => k !== "name");
    if (type === "hostPath") out.push(`volume ${v.name} is a hostPath (baseline)`);
    else if (!RESTRICTED_VOLUMES.has(type)) out.push(`volume ${v.name} is of type ${type} (restricted allows ${[...RESTRICTED_VOLUMES].join(", ")})`);
  }
  const containers = [
    ...(spec.containers ?? []).map((c) => ["container", c]),
    ...(spec.initContainers ?? []).map((c) => ["init container", c]),
    ...(spec.ephemeralContainers ?? []).map((c) => ["ephemeral container", c]),
  ];
  for (const [what, c] of containers) {
    const sc = c.securityContext ?? {};
    const w = `${what} ${c.name}`;
    if (sc.privileged) out.push(`${w}: privileged (baseline)`);
    if (sc.windowsOptions?.hostProcess) out.push(`${w}: windowsOptions.hostProcess (baseline)`);
    if (sc.procMount && sc.procMount !== "Default") out.push(`${w}: procMount ${sc.procMount} (baseline)`);
    seLinuxProblems(sc.seLinuxOptions, `${w}: securityContext`, out);
    appArmorProblem(sc.appArmorProfile, `${w}: securityContext`, out);
    for (const p of c.ports ?? []) if (p.hostPort) out.push(`${w}: hostPort ${p.hostPort} (baseline)`);
    for (const cap of sc.capabilities?.add ?? []) {
      if (!BASELINE_CAPS.has(cap)) out.push(`${w}: adds capability ${cap} (baseline)`);
      else if (cap !== "NET_BIND_SERVICE") out.push(`${w}: adds capability ${cap} (restricted allows only NET_BIND_SERVICE)`);
    }
    if (sc.allowPrivilegeEscalation !== false) out.push(`${w}: allowPrivilegeEscalation is not false (restricted)`);
    if (!(sc.capabilities?.drop ?? []).includes("ALL")) out.push(`${w}: capabilities.drop lacks ALL (restricted)`);
    if (sc.runAsNonRoot === false || (sc.runAsNonRoot !== true && psc.runAsNonRoot !== true))
      out.push(`${w}: runAsNonRoot is not true, here or for the pod (restricted)`);
    if (sc.runAsUser === 0) out.push(`${w}: runAsUser is 0 (restricted)`);
    const seccomp = sc.seccompProfile?.type ?? psc.seccompProfile?.type;
    if (!["RuntimeDefault", "Localhost"].includes(seccomp))
      out.push(`${w}: seccompProfile is ${seccomp ?? "unset"}, here and for the pod (restricted: RuntimeDefault or Localhost)`);
  }
  return out;
}

function main(files) {
  if (files.length === 0) {
    console.error("usage: node check-restricted.mjs FILE.yaml...");
    return 2;
  }
  let bad = 0, pods = 0;
  for (const file of files) {
    for (const doc of parseAllDocuments(readFileSync(file, "utf8")).map((d) => d.toJS()).filter(Boolean)) {
      for (const [where, spec] of podSpecs(doc)) {
        pods++;
        for (const v of violations(spec)) {
          console.log(`restricted: ${basename(file)} ${doc.kind} ${doc.metadata?.name} ${where}: ${v}`);
          bad++;
        }
      }
    }
  }
  if (pods === 0) {
    console.log(`restricted: no pod template in ${files.map((f) => basename(f)).join(", ")}`);
    return 1;
  }
  if (!bad) console.log(`restricted: ${pods} pod templates pass (${files.map((f) => basename(f)).join(", ")})`);
  return bad ? 1 : 0;
}

process.exitCode = main(process.argv.slice(2));
