// libFuzzer target for decide/fleet/attribute.h. The first byte sets flags
// (1: the process was found, 2: it has a uid, 4: it has a tree root, 8: the
// kubelet assigns the GPU, 16: the device is a MIG device); the rest is
// NUL-separated fields: the cgroup path, SLURM_JOB_ID, SLURM_STEP_ID,
// SLURM_JOB_USER, GPUENV_JOB_ID, HOSTNAME, the user, the root's command and
// GPU 0's mapping file (lines). What must hold for any input is checked.
#include <cstdio>
#include <cstdlib>
#include <set>
#include <string>
#include <string_view>

#include "decide/fleet/attribute.h"
#include "fuzz_check.h"

namespace gpuenv::fleet {
namespace {

// Whether `s` is valid UTF-8 without control characters, decoded here
// independently of attribute.cc.
bool safe_text(std::string_view s) {
  for (std::size_t i = 0; i < s.size();) {
    unsigned c = static_cast<unsigned char>(s[i]);
    int n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
    if (n == 0 || i + n > s.size()) return false;
    unsigned cp = n == 1 ? c : c & (0x7F >> n);
    for (int k = 1; k < n; ++k) {
      unsigned b = static_cast<unsigned char>(s[i + k]);
      if ((b >> 6) != 0x2) return false;
      cp = cp << 6 | (b & 0x3F);
    }
    static const unsigned kMin[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < kMin[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
    if (cp < 0x20 || (cp >= 0x7F && cp <= 0x9F)) return false;
    i += n;
  }
  return true;
}

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

void check_slurm(std::string_view path) {
  std::optional<SlurmCgroup> s = slurm_cgroup(path);
  if (!s) return;
  CHECK(!s->job.empty() && s->job.size() <= 20);
  CHECK(s->job.find_first_not_of("0123456789") == std::string::npos);
  CHECK(starts_with(path, s->job_cgroup));
  CHECK(s->job_cgroup.size() >= s->job.size() + 5);
  CHECK(s->job_cgroup.substr(s->job_cgroup.size() - s->job.size() - 5) == "/job_" + s->job);
  CHECK(s->step.size() <= 64);
}

void check_kubepods(std::string_view path) {
  std::optional<KubepodsCgroup> k = kubepods_cgroup(path);
  if (!k) return;
  CHECK(!k->pod_uid.empty() && k->pod_uid.size() <= 64);
  CHECK(k->pod_uid.find_first_not_of("0123456789abcdef-") == std::string::npos);
  CHECK(starts_with(path, k->pod_cgroup));
}

std::vector<std::string> fields(std::string_view text, char sep) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i <= text.size();) {
    std::size_t end = std::min(text.find(sep, i), text.size());
    out.emplace_back(text.substr(i, end - i));
    i = end + 1;
  }
  return out;
}

void check_owner(const JobOwner& o) {
  static const std::set<std::string> schedulers = {"slurm", "kubernetes", "none", "unknown"};
  static const std::set<std::string> sources = {"cgroup", "environ", "hpc-job-mapping", "pod-resources",
                                                "process-tree", ""};
  CHECK(schedulers.count(o.scheduler) == 1);
  CHECK(sources.count(o.source) == 1);
  CHECK(!o.job.empty());
  CHECK((o.scheduler == "unknown") == (o.source.empty()));
  CHECK(o.scheduler != "unknown" || o.job == "unknown");
  for (const std::string* s : {&o.job, &o.user, &o.step, &o.ns, &o.pod, &o.container, &o.command, &o.cgroup}) {
    CHECK(s->size() <= 128);
    CHECK(safe_text(*s));
  }
  // A tree's root names the job (none), or counts the CPU of a job that has no cgroup (environ).
  CHECK(o.scheduler == "none" || o.source == "environ" || o.root_pid == 0);
  CHECK(o.root_pid == 0 || o.cgroup.empty() || o.scheduler == "none");
}

void check_attribute(unsigned char flags, const std::vector<std::string>& f) {
  auto at = [&](std::size_t i) { return i < f.size() ? f[i] : std::string(); };
  ProcessFacts p;
  p.pid = 300, p.found = flags & 1, p.cgroup = at(0);
  if (flags & 2) p.uid = 1000u;
  if (flags & 4) p.root_pid = 200, p.root_uid = 0u;
  const char* names[] = {"SLURM_JOB_ID", "SLURM_STEP_ID", "SLURM_JOB_USER", "GPUENV_JOB_ID", "HOSTNAME"};
  for (std::size_t i = 0; i < 5; ++i)
    if (i + 1 < f.size()) p.env[names[i]] = f[i + 1];
  p.user = at(6), p.root_command = at(7), p.root_user = at(6);
  HpcJobMap hpc = {{"0", fields(at(8), '\n')}};
  PodDevices pods;
  if (flags & 8) pods.add("nvidia.com/gpu", "GPU-0000", {"train-0", "ml", "trainer"});
  DeviceReading parent, d;
  parent.gpu = 0, parent.uuid = "GPU-0000";
  d.gpu = 0, d.uuid = (flags & 16) ? "MIG-0000" : "GPU-0000";
  if (flags & 16) d.mig = 0;
  const DeviceReading* up = (flags & 16) ? &parent : nullptr;
  JobOwner o = attribute(p, d, up, hpc, pods);
  check_owner(o);
  CHECK(o == attribute(p, d, up, hpc, pods));
  if (std::optional<SlurmCgroup> s = slurm_cgroup(p.cgroup)) {
    CHECK(o.scheduler == "slurm" && o.source == "cgroup");
    CHECK(o.job == s->job);
  }
}

}  // namespace
}  // namespace gpuenv::fleet

extern "C" int LLVMFuzzerTestOneInput(const unsigned char* data, size_t size) {
  if (size == 0) return 0;
  std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  std::vector<std::string> f = gpuenv::fleet::fields(text, '\0');
  gpuenv::fleet::check_slurm(f[0]);
  gpuenv::fleet::check_kubepods(f[0]);
  gpuenv::fleet::check_attribute(data[0], f);
  return 0;
}
