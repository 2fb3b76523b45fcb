#!/usr/bin/env python3
"""The pod that deploy/kubernetes/pytorchjob.yaml's Master (or jobset.yaml's
replicated job) runs, as a Pod for `podman kube play`, against the stand-in
GPUs, so that its restricted securityContext is exercised for real. Only
these change, each printed on stderr: the image (the test's); runtimeClassName
and the GPU resources are dropped (the stand-in NVML and libcuda come in by a
read-only mount, as the container toolkit brings the real ones); the args
become `sleep 3600` behind the image's entrypoint (no torchrun in the test
image), so the test can exec into it.

  job-pod.py MANIFEST IMAGE LIB_DIR SCENARIO_DIR POD_NAME
"""
import sys

import yaml


def note(text):
    print(f"job-pod.py: {text}", file=sys.stderr)


def template_of(doc):
    if doc["kind"] == "PyTorchJob":
        return doc["spec"]["pytorchReplicaSpecs"]["Master"]["template"]
    if doc["kind"] == "JobSet":
        return doc["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]
    raise SystemExit(f"job-pod.py: {doc['kind']} is not a PyTorchJob or JobSet")


def main(argv):
    if len(argv) != 5:
        print(__doc__, file=sys.stderr)
        return 2
    path, image, lib_dir, scenario_dir, name = argv
    with open(path) as f:
        doc = next(d for d in yaml.safe_load_all(f) if d)
    spec = template_of(doc)["spec"]
    spec.pop("runtimeClassName", None)
    note("runtimeClassName dropped: the stand-in libraries stand for the NVIDIA runtime")
    spec["restartPolicy"] = "Never"
    for c in spec["containers"]:
        note(f"container {c['name']}: image {c['image']} -> {image}, args -> sleep 3600, resources dropped")
        c["image"], c["args"] = image, ["sleep", "3600"]
        c.pop("resources", None)
        c.pop("ports", None)
        c["env"] = [e for e in c.get("env", []) if "valueFrom" not in e] + [
            {"name": "GPUENV_NVML_LIBRARY", "value": "/opt/gpuenv-test/lib/libnvidia-ml.so.1"},
            {"name": "GPUENV_CUDA_LIBRARY", "value": "/opt/gpuenv-test/lib/libcuda.so.1"},
            {"name": "FAKE_NVML_SCENARIO", "value": "/opt/gpuenv-test/scenarios/h200.txt"},
            {"name": "FAKE_CUDA_SCENARIO", "value": "/opt/gpuenv-test/scenarios/h200.txt"},
        ]
        c.setdefault("volumeMounts", []).extend([
            {"name": "stand-in-lib", "mountPath": "/opt/gpuenv-test/lib", "readOnly": True},
            {"name": "stand-in-scenarios", "mountPath": "/opt/gpuenv-test/scenarios", "readOnly": True},
        ])
    spec.setdefault("volumes", []).extend([
        {"name": "stand-in-lib", "hostPath": {"path": lib_dir, "type": "Directory"}},
        {"name": "stand-in-scenarios", "hostPath": {"path": scenario_dir, "type": "Directory"}},
    ])
    yaml.safe_dump({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": spec}, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
