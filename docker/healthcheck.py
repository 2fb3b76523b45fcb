#!/usr/bin/env python3
"""HEALTHCHECK of the gpuenv image: does the service this container runs answer?

    healthcheck.py [auto|jupyter|ssh|none] [PORT]

auto (the default) looks at the container's processes: a Jupyter started by
`gpuenv serve jupyter` is asked GET /api (no token needed) on the port from its
--port=N; an sshd started by `gpuenv serve ssh` must greet on the Port of its
configuration; with neither (a batch job), the container is healthy while it
runs. Exit 0 healthy, 1 not.
"""
import os
import socket
import sys
import urllib.request


def processes():
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                yield [a.decode(errors="replace") for a in f.read().split(b"\0") if a]
        except OSError:
            pass


def jupyter_port(argv):
    if not any(os.path.basename(a).startswith("jupyter-") for a in argv[:2]):
        return None
    for a in argv:
        if a.startswith("--port="):
            return int(a.split("=", 1)[1])
    return 8888


def sshd_port(argv):
    if not argv or os.path.basename(argv[0]) != "sshd" or "-D" not in argv:
        return None
    config = argv[argv.index("-f") + 1] if "-f" in argv[:-1] else "/etc/ssh/sshd_config"
    try:
        with open(config) as f:
            for line in f:
                words = line.split()
                if len(words) == 2 and words[0].lower() == "port":
                    return int(words[1])
    except OSError:
        pass
    return 22


def detect():
    for argv in processes():
        port = jupyter_port(argv)
        if port:
            return "jupyter", port
        port = sshd_port(argv)
        if port:
            return "ssh", port
    return "none", 0


def jupyter_ok(port):
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/api", timeout=5) as r:
        return r.status == 200


def ssh_ok(port):
    with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
        return s.recv(64).startswith(b"SSH-")


def main(args):
    mode = args[0] if args else "auto"
    port = int(args[1]) if len(args) > 1 else 0
    if mode == "auto":
        mode, port = detect()
    checks = {"jupyter": (jupyter_ok, 8888), "ssh": (ssh_ok, 22)}
    if mode == "none":
        return 0
    if mode not in checks:
        print(f"healthcheck: unknown mode {mode}", file=sys.stderr)
        return 1
    check, default_port = checks[mode]
    try:
        ok = check(port or default_port)
    except OSError as e:
        print(f"healthcheck: {mode} on port {port or default_port}: {e}", file=sys.stderr)
        return 1
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
