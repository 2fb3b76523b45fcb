// The host around the GPUs: /dev/shm, the locked-memory limit, and whether
// Python must recompile torch at every start.
#include <cstdint>

#include "diagnose/describe.h"
#include "diagnose/doctor.h"

namespace gpuenv {

namespace {
constexpr std::uint64_t kGiB = 1ull << 30;
}

namespace {

std::string shm_fix(const Machine& m) {
  if (m.host.container == std::string("kubernetes"))
    return "mount an emptyDir with `medium: Memory` (and a sizeLimit) at /dev/shm";
  if (m.host.container) return "start the container with `--shm-size=16g`, or `--ipc=host`";
  return "`sudo mount -o remount,size=16G /dev/shm`";
}

}  // namespace

std::vector<Finding> check_shm(const Machine& m, const Options&) {
  if (m.host.shm_writable == false) {
    std::string fix = m.host.container ? shm_fix(m)
                                       : "mount a writable tmpfs there: `sudo mount -t tmpfs -o size=16G tmpfs /dev/shm`";
    return {error("/dev/shm is unusable (" + m.host.shm_error.value_or("no file can be created there") +
                      "): DataLoader workers and NCCL's shared-memory transport fail to start",
                  fix)};
  }
  if (!m.host.shm_bytes) return {};
  std::uint64_t size = *m.host.shm_bytes;
  std::string seen = "/dev/shm is " + bytes_text(size);
  if (size >= kGiB) return {ok(seen)};
  std::string fix = shm_fix(m);
  return {warning(seen + ": DataLoader workers pass batches through it and die with \"Bus "
                         "error\" or \"unable to write to file </torch_...>\" when it fills",
                  fix)};
}

std::vector<Finding> check_memlock(const Machine& m, const Options&) {
  if (m.host.ib_devices.empty() || !m.host.memlock_bytes) return {};
  std::uint64_t limit = *m.host.memlock_bytes;
  if (limit == UINT64_MAX) return {ok("locked memory is unlimited, as RDMA needs")};
  std::string fix = m.host.container ? "start the container with `--ulimit memlock=-1:-1`"
                                     : "raise it: `memlock unlimited` in "
                                       "/etc/security/limits.conf, or LimitMEMLOCK=infinity "
                                       "for a systemd service";
  return {warning("the locked-memory limit is " + bytes_text(limit) + " with " +
                      std::to_string(m.host.ib_devices.size()) +
                      " InfiniBand/RoCE device(s): NCCL's IB transport registers (locks) its "
                      "buffers and fails or falls back to sockets",
                  fix)};
}

std::vector<Finding> check_bytecode(const Machine& m, const Options& o) {
  if (!m.torch || !m.torch->bytecode_cached) return {};
  if (*m.torch->bytecode_cached) return {ok("torch's Python bytecode is compiled (__pycache__)")};
  const std::string* prefix = o.getenv("PYTHONPYCACHEPREFIX");
  const std::string* forbid = o.getenv("PYTHONDONTWRITEBYTECODE");
  bool writes = !forbid || forbid->empty();
  if (prefix && !prefix->empty() && writes)
    return {ok("torch ships no bytecode; Python keeps it under PYTHONPYCACHEPREFIX=" + *prefix)};
  std::string why = forbid && !forbid->empty()
                        ? " and PYTHONDONTWRITEBYTECODE=" + *forbid + " forbids writing it"
                        : "";
  return {warning("torch" + (m.torch->path ? " at " + *m.torch->path : std::string()) +
                      " holds no compiled bytecode" + why +
                      ": every start compiles its Python sources again (`import torch`: 3.3 s on "
                      "an H200 host, 1.7 s with bytecode)",
                  "run under `gpuenv run`, which keeps the bytecode under the cache root "
                  "(PYTHONPYCACHEPREFIX)")};
}

}  // namespace gpuenv
