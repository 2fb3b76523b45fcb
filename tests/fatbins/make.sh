#!/bin/sh
# Builds the inspect fixtures from kernel.cu with nvcc: small fatbins, and
# ELF files cut down to their fatbin section (objcopy --only-section) so
# each stays a few KB. Usage: make.sh NVCC OUTDIR
# The committed copies in tests/fatbins/ came from CUDA 13.0 (nvcc
# V13.0.88); tests/CMakeLists.txt rebuilds them in the build tree when nvcc
# is present, and src/sense/fatbin/fatbin_parse_test.cc checks both. A fixture this nvcc
# cannot build (sm_100f needs CUDA 12.9) is skipped; the exit status says so.
set -u
nvcc=$1
out=$2
src=$(dirname "$0")/kernel.cu
mkdir -p "$out" || exit 1
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
failed=0

fatbin() {  # NAME GENCODE...
  name=$1
  shift
  "$nvcc" -fatbin -o "$out/$name" "$@" "$src" || skip "$name"
}

skip() {
  echo "make.sh: could not build $1" >&2
  failed=1
}

# ELF file with only SECTION kept: NAME SECTION NVCC-ARGS...
elf() {
  name=$1 section=$2
  shift 2
  "$nvcc" -o "$tmp/$name" "$@" "$src" &&
    objcopy --only-section="$section" "$tmp/$name" "$out/$name" 2>/dev/null || skip "$name"
}

fatbin sm80_sm90_ptx90.fatbin -gencode arch=compute_80,code=sm_80 \
  -gencode arch=compute_90,code=[sm_90,compute_90]
fatbin sm90a.fatbin -gencode arch=compute_90a,code=[sm_90a,compute_90a]
fatbin sm100f.fatbin -gencode arch=compute_100f,code=[sm_100f,compute_100f]
fatbin compressed.fatbin -Xfatbin -compress-all -gencode arch=compute_80,code=sm_80 \
  -gencode arch=compute_90,code=[sm_90,compute_90]
# A cubin by itself: an ELF file for the GPU (EM_CUDA), with no fatbin.
"$nvcc" -cubin -o "$out/sm80.cubin" -gencode arch=compute_80,code=sm_80 "$src" || skip sm80.cubin
# A host object: .nv_fatbin in an ELF relocatable file.
elf sm75_sm86.o .nv_fatbin -c -gencode arch=compute_75,code=sm_75 -gencode arch=compute_86,code=sm_86
# Relocatable device code (-rdc): __nv_relfatbin, not .nv_fatbin.
elf rdc_sm80.o __nv_relfatbin -rdc=true -c -gencode arch=compute_80,code=[sm_80,compute_80]
# A shared library: two fatbins (the kernel's and the static CUDA runtime's).
elf sm89_ptx89.so .nv_fatbin -shared -Xcompiler -fPIC -gencode arch=compute_89,code=sm_89 \
  -gencode arch=compute_89,code=compute_89
exit $failed
