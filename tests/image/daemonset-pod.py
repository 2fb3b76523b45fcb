#!/usr/bin/env python3
"""The pod that deploy/kubernetes/daemonset.yaml's DaemonSet runs on a node,
as a Pod for `podman kube play` (podman 4.3 plays Pods and Deployments, not
DaemonSets), against the stand-in GPUs. Only these change, and each is printed
on stderr:
  - the image: the one the test built;
  - runtimeClassName is dropped: the stand-in NVML and libcuda come in as the
    container toolkit brings the real ones (a read-only mount and
    GPUENV_NVML_LIBRARY / GPUENV_CUDA_LIBRARY / FAKE_*_SCENARIO);
  - the features.d hostPath points at a scratch directory;
  - the kubelet's pod-resources hostPath becomes an empty directory: there is no
    kubelet here, so the exporter finds no socket and serves no pod labels
    (tests/export_pods_test.cc checks them against a stand-in kubelet);
  - with --idle NAME, that container runs `sleep` instead of its command, and
    without its probes (for an image that lacks the command); the rest of it
    stays as it is.

  daemonset-pod.py DAEMONSET IMAGE FEATURES_DIR LIB_DIR SCENARIO_DIR POD_NAME [--idle NAME]
"""
import sys

import yaml

FEATURES = "/etc/kubernetes/node-feature-discovery/features.d"
POD_RESOURCES = "/var/lib/kubelet/pod-resources"


def note(text):
    print(f"daemonset-pod.py: {text}", file=sys.stderr)


def stand_in(container, lib_dir, scenario_dir):
    container.setdefault("volumeMounts", []).extend([
        {"name": "stand-in-lib", "mountPath": "/opt/gpuenv-test/lib", "readOnly": True},
        {"name": "stand-in-scenarios", "mountPath": "/opt/gpuenv-test/scenarios", "readOnly": True},
    ])
    container.setdefault("env", []).extend([
        {"name": "GPUENV_NVML_LIBRARY", "value": "/opt/gpuenv-test/lib/libnvidia-ml.so.1"},
        {"name": "GPUENV_CUDA_LIBRARY", "value": "/opt/gpuenv-test/lib/libcuda.so.1"},
        {"name": "FAKE_NVML_SCENARIO", "value": "/opt/gpuenv-test/scenarios/h200.txt"},
        {"name": "FAKE_CUDA_SCENARIO", "value": "/opt/gpuenv-test/scenarios/h200.txt"},
    ])


NODE_NAME = "stand-in-node"  # what the kubelet would put in spec.nodeName


def pod(daemonset, image, features_dir, lib_dir, scenario_dir, name, idle):
    template = daemonset["spec"]["template"]
    spec = template["spec"]
    if spec.pop("runtimeClassName", None):
        note("runtimeClassName dropped: the stand-in libraries stand for the NVIDIA runtime")
    for c in spec["containers"]:
        if c["name"] in idle:
            note(f"container {c['name']}: command {' '.join(c['command'])} -> tini -- sleep 3600")
            c["command"] = ["tini", "--", "sleep", "3600"]
            for probe in ("livenessProbe", "readinessProbe"):
                c.pop(probe, None)
        for e in c.get("env", []):
            if e.get("valueFrom", {}).get("fieldRef", {}).get("fieldPath") == "spec.nodeName":
                # podman 4.3's kube play has no spec.nodeName: the node's name is a value here.
                e.pop("valueFrom")
                e["value"] = NODE_NAME
                note(f"container {c['name']}: env {e['name']} from spec.nodeName -> {NODE_NAME}")
        note(f"container {c['name']}: image {c['image']} -> {image}")
        c["image"] = image
        stand_in(c, lib_dir, scenario_dir)
    for v in spec["volumes"]:
        if v.get("hostPath", {}).get("path") == FEATURES:
            v["hostPath"]["path"] = features_dir
            note(f"volume {v['name']}: hostPath {FEATURES} -> {features_dir}")
        elif v.get("hostPath", {}).get("path") == POD_RESOURCES:
            del v["hostPath"]
            v["emptyDir"] = {}
            note(f"volume {v['name']}: hostPath {POD_RESOURCES} -> an empty directory (no kubelet here)")
    spec["volumes"] += [
        {"name": "stand-in-lib", "hostPath": {"path": lib_dir, "type": "Directory"}},
        {"name": "stand-in-scenarios", "hostPath": {"path": scenario_dir, "type": "Directory"}},
    ]
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "labels": template["metadata"]["labels"]}, "spec": spec}


def main(argv):
    idle = []
    if "--idle" in argv:
        i = argv.index("--idle")
        idle = [argv[i + 1]]
        argv = argv[:i] + argv[i + 2:]
    if len(argv) != 6:
        print(__doc__, file=sys.stderr)
        return 2
    path, image, features_dir, lib_dir, scenario_dir, name = argv
    with open(path) as f:
        docs = [d for d in yaml.safe_load_all(f) if d]
    daemonsets = [d for d in docs if d.get("kind") == "DaemonSet"]
    if len(daemonsets) != 1:
        print(f"daemonset-pod.py: {path} has {len(daemonsets)} DaemonSets, not one", file=sys.stderr)
        return 1
    yaml.safe_dump(pod(daemonsets[0], image, features_dir, lib_dir, scenario_dir, name, idle), sys.stdout,
                   sort_keys=False)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
