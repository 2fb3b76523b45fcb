// Sense: the only layer that touches hardware or the OS. Each part fills
// its piece of the Machine and records what failed as Problems; none of
// them throws or exits.
#pragma once

#include <string>

#include "model/machine.h"
#include "store/store.h"

namespace gpuenv {

struct SenseOptions {
  // Query the CUDA driver too (cuInit is slow: docs/performance.md). Off on the default
  // detect path; on when NVML is unavailable (Jetson, broken NVML) the CUDA
  // driver is tried as a fallback regardless.
  bool with_cuda = false;
  // Library names or paths; defaults come from GPUENV_NVML_LIBRARY /
  // GPUENV_CUDA_LIBRARY, else the sonames through the normal loader search.
  std::string nvml_library = "libnvidia-ml.so.1";
  std::string cuda_library = "libcuda.so.1";
  // DCGM, loaded (not started) by doctor where a GPU predates Hopper;
  // GPUENV_DCGM_LIBRARY overrides it as the others.
  std::string dcgm_library = "libdcgm.so.4";
  // Filesystem root for /proc, /sys, /dev (tests point it at a fake tree).
  std::string root = "/";
  // doctor: per-GPU health (clock event reasons, temperature, ECC, row
  // remapping, NVLink fabric state). Off on the detect path.
  bool with_health = false;
  // The persistence and compute modes, the power limit, the PCIe link
  // (generation, width), the maximum SM and memory clocks, the active NVLink
  // links and P2P over NVLink: no rule needs them, and they are NVML's
  // slowest queries (docs/performance.md). The fast paths (detect's summary, env,
  // explain, run) leave them out; detect --json and doctor read them.
  bool with_details = true;
  // The interpreter whose torch to read (--python); empty: $VIRTUAL_ENV,
  // else $CONDA_PREFIX, else python3 on $PATH.
  std::string python;
  // doctor: read the CUDA code libtorch_cuda.so carries.
  bool with_torch_kernels = false;
  // doctor: ask the interpreter for its sys.path (torch is not
  // imported), which sees $PYTHONPATH, .pth files and editable installs;
  // the file-only emulation stays the fallback and the only way under a
  // test root.
  bool ask_python = false;
  // doctor --extensions: every other library under torch's site-packages
  // that carries CUDA code (flash-attn, xformers, bitsandbytes, ...).
  bool with_extensions = false;
  // The measurement store to read (store::path_in(the cache root)); "":
  // none. It waits for a store another process holds no longer than
  // store_patience (which the command's other reads share).
  std::string store_path;
  store::Patience store_patience;
  // What gpuenv's image recorded of its base image's environment when it was
  // built (docker/setup-image.sh base-env): PREFIX/lib/gpuenv/base-image.env
  // beside the installed binary; "" or a missing file: none.
  std::string base_image_env_file;
};

/// NVML (and, when asked or as the fallback, the CUDA driver): fills
/// m->nvidia, m->gpus and m->pairs. Implemented in sense/nvidia.cc.
void sense_nvidia(const SenseOptions& opts, Machine* m);

/// CPUs, cgroups, memory, NUMA, /dev/shm, container, device nodes,
/// InfiniBand, network interfaces. Implemented in sense/host/host.cc.
void sense_host(const SenseOptions& opts, Host* host);

/// Whether a file can be created (and removed) in `dir`, as PyTorch's
/// DataLoader workers do in /dev/shm: sets host->shm_writable and, when it
/// cannot, host->shm_error. sense_host asks it of /dev/shm at root "/".
void sense_shm_writable(const std::string& dir, Host* host);

/// The PyTorch python3 would import, read from its files. sense/python/torch.cc.
/// When opts.python names no usable interpreter: nullopt, with *why (if
/// given) saying so for the user ("--python /x: no such file"); *why is
/// left alone when there is simply no torch (or no python3 on $PATH).
/// A file of the search that is there but cannot be read (torch/version.py
/// or pyvenv.cfg as a FIFO, say) adds a Problem to *problems, if given.
std::optional<Torch> sense_torch(const SenseOptions& opts, std::string* why = nullptr,
                                 std::vector<Problem>* problems = nullptr);

/// The variables that steer the plan, from the process environment.
std::map<std::string, std::string> sense_env();

/// The steering variables' values in `path`, the base image's environment as
/// `env -0` wrote it (NAME=VALUE, each ended by a NUL) when gpuenv's image was
/// built; other names are left out. Empty when the file is missing, unreadable
/// or larger than 1 MiB: then every set value counts as the user's, as before.
std::map<std::string, std::string> read_base_image_env(const std::string& path);

/// All of the above. When opts.python names no usable interpreter and
/// torch_why is given, *torch_why says why, as sense_torch's does.
Machine sense_machine(const SenseOptions& opts, std::string* torch_why = nullptr);

}  // namespace gpuenv
