#!/usr/bin/env python3
"""ctest unity.batches: the unity batches (cmake/GpuenvUnity.cmake) hold every
source exactly once, by a path relative to its include directory, at most
BATCH to a file.

A source in no batch would be left out of the build without an error until
something links against it; one in two batches is a duplicate definition; an
absolute path makes a batch differ between clones, so ccache would miss on
every fresh clone (CI's warm runs depend on those hits).

Usage: unity_batches.py SOURCE_DIR BUILD_DIR BATCH
"""
import pathlib
import re
import sys


def batches(directory, prefix):
    out = {}
    for f in sorted(pathlib.Path(directory).glob(prefix + "_*.cc")):
        out[f] = re.findall(r'^#include "([^"]+)"$', f.read_text(), re.M)
    return out


def check(name, found, want, batch, failures):
    seen = {}
    for f, includes in found.items():
        if len(includes) > batch:
            failures.append(f"{f}: {len(includes)} sources, more than {batch}")
        for inc in includes:
            if inc.startswith("/"):
                failures.append(f"{f}: an absolute path ({inc}) differs between clones")
            seen.setdefault(inc, []).append(f.name)
    for src in sorted(want):
        if src not in seen:
            failures.append(f"{name}: {src} is in no batch")
    for inc, where in sorted(seen.items()):
        if len(where) > 1:
            failures.append(f"{name}: {inc} is in {len(where)} batches ({', '.join(where)})")
        if inc not in want:
            failures.append(f"{name}: {inc} ({where[0]}) is not one of the target's sources")


def main():
    source, build, batch = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2]), int(sys.argv[3])
    src = source / "src"
    lib = {p.relative_to(src).as_posix() for p in src.rglob("*.cc")}
    unit_tests = {s for s in lib if s.endswith("_test.cc")}
    lib -= unit_tests
    lib -= {s for s in lib if s.endswith("_fuzz.cc")}
    lib -= {"cli/main.cc", "sense/kubelet/kubelet_helper.cc"}  # the binaries gpuenv and gpuenv-kubelet
    e2e = {p.name for p in (source / "tests").glob("*.cc")}
    failures = []
    check("gpuenv_core", batches(build / "unity", "core"), lib, batch, failures)
    check("gpuenv_tests", batches(build / "tests" / "unity", "tests"), unit_tests | e2e, batch, failures)
    for f in failures:
        print("FAIL:", f)
    if not failures:
        print(f"ok: {len(lib)} library and {len(unit_tests | e2e)} test sources, each in one batch")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
