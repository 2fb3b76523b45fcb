"""A CPython extension whose CUDA code nvcc compiles (tests/image/test-image.sh).

No torch: the image test's stand-in base has none. torch.utils.cpp_extension
does the same for a torch extension: nvcc for the .cu files, for the
architectures in TORCH_CUDA_ARCH_LIST (which gpuenv's plan sets), then the
host compiler links the module.
"""
import os
import subprocess

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext


def gencode(arch_list):
    """-gencode flags for a TORCH_CUDA_ARCH_LIST ("8.0;9.0+PTX")."""
    flags = []
    for arch in arch_list.replace(",", ";").replace(" ", ";").split(";"):
        if not arch:
            continue
        num = arch.replace("+PTX", "").replace(".", "")
        flags.append(f"-gencode=arch=compute_{num},code=sm_{num}")
        if arch.endswith("+PTX"):
            flags.append(f"-gencode=arch=compute_{num},code=compute_{num}")
    return flags


class NvccBuildExt(build_ext):
    def build_extension(self, ext):
        cuda = os.environ.get("CUDA_HOME", "/usr/local/cuda")
        os.makedirs(self.build_temp, exist_ok=True)
        objects = []
        for source in [s for s in ext.sources if s.endswith(".cu")]:
            obj = os.path.join(self.build_temp, os.path.basename(source) + ".o")
            cmd = [os.path.join(cuda, "bin", "nvcc"), "-c", source, "-o", obj, "-O2", "-Xcompiler", "-fPIC",
                   *gencode(os.environ.get("TORCH_CUDA_ARCH_LIST", "9.0"))]
            print(" ".join(cmd), flush=True)  # pip install -v shows it
            subprocess.check_call(cmd)
            objects.append(obj)
        ext.sources = [s for s in ext.sources if not s.endswith(".cu")]
        ext.extra_objects = objects
        ext.library_dirs = [os.path.join(cuda, "lib64")]
        # The CUDA runtime linked in: the module also imports where no
        # toolkit is installed (the runtime image).
        ext.libraries = ["cudart_static", "stdc++", "rt", "pthread", "dl"]
        super().build_extension(ext)


setup(
    name="gpuenv-test-ext",
    version="1.0",
    ext_modules=[Extension("gpuenv_test_ext", ["module.c", "kernel.cu"])],
    cmdclass={"build_ext": NvccBuildExt},
)
