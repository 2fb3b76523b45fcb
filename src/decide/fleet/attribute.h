// Which job a GPU process belongs to (issue 38, docs/metrics.md "Jobs"):
// pure rules over what /proc said of it (ProcessFacts), dcgm-exporter's
// mapping directory and the kubelet's assignments. A process whose job
// cannot be told is "unknown": never dropped, never guessed.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "model/gpu_jobs.h"
#include "model/gpu_reading.h"
#include "model/kubelet/pod_devices.h"

namespace gpuenv::fleet {

/// A Slurm job's cgroup: v2 ".../job_N/step_M/..." (slurmstepd.scope), v1
/// "/slurm/uid_U/job_N/step_M/...". step is "" above the step level;
/// "batch", "extern" and "interactive" are taken as Slurm writes them.
struct SlurmCgroup {
  std::string job, step;
  std::optional<std::uint32_t> uid;  // v1's uid_U
  std::string job_cgroup;            // the path up to and including job_N
  friend bool operator==(const SlurmCgroup&, const SlurmCgroup&) = default;
};
std::optional<SlurmCgroup> slurm_cgroup(std::string_view path);

/// A Kubernetes pod's cgroup, in the cgroupfs and systemd drivers' forms
/// (".../kubepods/burstable/podUID/CONTAINER", ".../kubepods-burstable-
/// podUID_WITH_UNDERSCORES.slice/cri-containerd-ID.scope"): the pod's UID
/// (dashes, as the API has it) and the container id ("" above it).
struct KubepodsCgroup {
  std::string pod_uid, container_id;
  std::string pod_cgroup;  // the path up to and including the pod's level
  friend bool operator==(const KubepodsCgroup&, const KubepodsCgroup&) = default;
};
/// Also a systemd-driver path seen from inside a private cgroup namespace
/// ("/../../kubepods-burstable.slice/kubepods-burstable-podUID.slice/…"):
/// pod_cgroup is then the host's path, rebuilt from the slice's name.
std::optional<KubepodsCgroup> kubepods_cgroup(std::string_view path);

/// The job of process `p` on device `d` (`parent`: a MIG device's GPU, else
/// nullptr), first rule that tells:
///  1. a Slurm cgroup (source "cgroup"; user p.user, else SLURM_JOB_USER,
///     else the uid's digits: the job's own environment may name anyone, so
///     it only stands in for a uid without a name here);
///  2. SLURM_JOB_ID in its environment (source "environ"; user as in 1);
///  3. `hpc`'s file for the device's GPU index naming exactly one job
///     (source "hpc-job-mapping"; several jobs there tell nothing);
///  4. `pods` assigning the device to a container, unless the process's
///     cgroup is another pod's (a kubepods cgroup whose HOSTNAME is not that
///     pod's name; source "pod-resources"); else a kubepods cgroup: job
///     "pod-UID", pod from HOSTNAME (source "cgroup");
///  5. GPUENV_JOB_ID (scheduler "none", source "environ");
///  6. its tree's root (scheduler "none", job "pid-ROOT", source "process-tree");
///  else scheduler and job "unknown". Rules 3 and 4 need no ProcessFacts
///  (found=false: the exporter cannot see the host's processes). Job users:
///  a uid without a name here is its digits; "none" jobs take their tree
///  root's user. Every text is made a safe label value (each byte that is
///  not valid UTF-8 and each control character U+FFFD, at most 128 bytes);
///  a cgroup that is not one already is dropped. A job id that is not one
///  (empty, over 64 bytes, characters outside [A-Za-z0-9_.+-]) tells
///  nothing. Paths through a systemd user manager (user@UID.service, a
///  subtree its user may name at will) are neither Slurm's nor the kubelet's.
JobOwner attribute(const ProcessFacts& p, const DeviceReading& d, const DeviceReading* parent, const HpcJobMap& hpc,
                   const PodDevices& pods);

}  // namespace gpuenv::fleet
