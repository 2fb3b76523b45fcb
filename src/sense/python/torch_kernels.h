// The CUDA code PyTorch and the libraries beside it carry, read from their
// files with the fatbin parser (sense/fatbin/fatbin_file.h): each file is mapped and
// only its headers are touched. Paths are as seen from inside `root` (the
// fake tree of tests; "/" on a live machine). docs/snapshot.md, `torch`.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "model/machine.h"
#include "sense/fatbin/fatbin_parse.h"

namespace gpuenv {

/// The distinct cubin and PTX targets of the code the CUDA runtime loads
/// (.nv_fatbin; __nv_relfatbin only when there is no .nv_fatbin, as inspect
/// judges), named by fatbin_target_name and sorted cubins first, then by
/// architecture, plain before `a` before `f`: "sm_90", "sm_90a", "sm_100f",
/// "compute_90". LTO-IR and unknown entry kinds are left out: the runtime
/// cannot load them.
std::vector<std::string> loadable_targets(const FatbinFile& f);

/// Reads the CUDA code in `path`. Returns false when the file parses but
/// carries no loadable code (no cubin, no PTX); otherwise true with *out
/// filled: the targets, or `error` when the file cannot be read or parsed.
bool read_cuda_binary(const std::string& root, const std::string& path,
                      CudaBinary* out);

/// torch_dir/lib/libtorch_cuda.so; where that is absent, the older split
/// libtorch_cuda_cu.so + libtorch_cuda_cpp.so (1.10-1.12): the path is the
/// first of them with CUDA code and the targets are the union. nullopt for
/// a CPU-only torch (none of them exists). package is "torch".
std::optional<CudaBinary> sense_libtorch_cuda(const std::string& root,
                                              const std::string& torch_dir);

/// Every shared library (*.so, *.so.N) under `site` (torch's site-packages)
/// that carries CUDA code, or failed to parse, sorted by path; package is
/// its first path component under `site`. Walks at most 6 levels deep and
/// follows no symbolic links (wheels cannot hold them, and so no loop can
/// form); skips __pycache__ and *.dist-info. Leaves out the libraries that
/// sense_libtorch_cuda reads. Includes the nvidia/* CUDA wheels.
/// distribution is the wheel whose *.dist-info/RECORD lists the file.
std::vector<CudaBinary> sense_torch_extensions(const std::string& root,
                                               const std::string& site,
                                               const std::string& torch_dir);

}  // namespace gpuenv
