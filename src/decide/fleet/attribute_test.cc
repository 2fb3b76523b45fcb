#include "decide/fleet/attribute.h"

#include <gtest/gtest.h>

#include <functional>

namespace gpuenv::fleet {
namespace {

const std::string kFffd = "\xEF\xBF\xBD";  // U+FFFD, what an unsafe character becomes
const std::string kSlurmV2 = "/system.slice/slurmstepd.scope/job_1234/step_0/user/task_0";
const std::string kPodUid = "1b2c3d4e-aaaa-bbbb-cccc-123456789abc";
const std::string kPodCgroup = "/kubepods/burstable/pod" + kPodUid;

// alice's python3 (300) under torchrun (200), its tree's root.
ProcessFacts alice() {
  ProcessFacts p;
  p.pid = 300, p.found = true, p.uid = 1000u, p.user = "alice";
  p.root_pid = 200, p.root_command = "torchrun", p.root_uid = 1000u, p.root_user = "alice";
  return p;
}

ProcessFacts with(ProcessFacts p, const std::function<void(ProcessFacts&)>& edit) {
  edit(p);
  return p;
}

ProcessFacts in_cgroup(const std::string& cgroup, std::map<std::string, std::string> env = {}) {
  return with(alice(), [&](ProcessFacts& p) { p.cgroup = cgroup, p.cgroup_version = 2, p.env = std::move(env); });
}

ProcessFacts with_env(std::map<std::string, std::string> env) { return in_cgroup("", std::move(env)); }

JobOwner job(const char* scheduler, const std::string& id, const char* source,
             const std::function<void(JobOwner&)>& edit = {}) {
  JobOwner o;
  o.scheduler = scheduler, o.job = id, o.source = source, o.user = "alice";
  if (edit) edit(o);
  return o;
}

// A job told from the environment has no cgroup: its CPU is its tree's (root 200).
JobOwner slurm(const std::string& id, const char* source, const std::string& step, const std::string& cgroup,
               const std::string& user = "alice") {
  return job("slurm", id, source, [&](JobOwner& o) {
    o.step = step, o.cgroup = cgroup, o.user = user;
    if (std::string(source) == "environ") o.root_pid = 200;
  });
}

JobOwner tree(const std::string& id, const char* source) {
  return job("none", id, source, [](JobOwner& o) { o.command = "torchrun", o.root_pid = 200; });
}

JobOwner pod_resources(const std::string& cgroup) {
  return job("kubernetes", "ml/train-0", "pod-resources", [&](JobOwner& o) {
    o.ns = "ml", o.pod = "train-0", o.container = "trainer", o.cgroup = cgroup;
  });
}

JobOwner pod_cgroup(const std::string& pod) {
  return job("kubernetes", "pod-" + kPodUid, "cgroup", [&](JobOwner& o) { o.pod = pod, o.cgroup = kPodCgroup; });
}

JobOwner unknown(const std::string& user) {
  JobOwner o;
  o.user = user;
  return o;
}

DeviceReading gpu(int index, const std::string& uuid) {
  DeviceReading d;
  d.gpu = index, d.uuid = uuid;
  return d;
}

struct AttributeRow {
  const char* name;
  ProcessFacts process;
  HpcJobMap hpc;
  bool assigned;  // the kubelet gives GPU 0 to ml/train-0's trainer
  JobOwner want;
};

void check(const AttributeRow& r, const DeviceReading& d, const DeviceReading* parent) {
  PodDevices pods;
  if (r.assigned) pods.add("nvidia.com/gpu", "GPU-0000", {"train-0", "ml", "trainer"});
  JobOwner got = attribute(r.process, d, parent, r.hpc, pods);
  EXPECT_EQ(got.scheduler, r.want.scheduler) << r.name;
  EXPECT_EQ(got.job, r.want.job) << r.name;
  EXPECT_EQ(got.source, r.want.source) << r.name;
  EXPECT_EQ(got.user, r.want.user) << r.name;
  EXPECT_EQ(got.step, r.want.step) << r.name;
  EXPECT_EQ(got.cgroup, r.want.cgroup) << r.name;
  EXPECT_EQ(got.command, r.want.command) << r.name;
  EXPECT_EQ(got.root_pid, r.want.root_pid) << r.name;
  EXPECT_EQ(got.ns + "|" + got.pod + "|" + got.container, r.want.ns + "|" + r.want.pod + "|" + r.want.container)
      << r.name;
  EXPECT_EQ(got, r.want) << r.name;
}

TEST(Attribute, EachRuleInItsOrder) {
  const HpcJobMap one_job = {{"0", {"42"}}};
  const ProcessFacts gone = with(ProcessFacts{}, [](ProcessFacts& p) { p.pid = 300; });
  const ProcessFacts nameless = with(alice(), [](ProcessFacts& p) { p.user = "", p.uid = 4000000u; });
  const AttributeRow rows[] = {
      // 1. A Slurm cgroup.
      {"slurm v2 cgroup", in_cgroup(kSlurmV2), {}, false,
       slurm("1234", "cgroup", "0", "/system.slice/slurmstepd.scope/job_1234")},
      {"slurm v1 cgroup", in_cgroup("/slurm_node1/uid_1000/job_7/step_batch"), {}, false,
       slurm("7", "cgroup", "batch", "/slurm_node1/uid_1000/job_7")},
      {"the cgroup beats the environment", in_cgroup(kSlurmV2, {{"SLURM_JOB_ID", "999"}}), one_job, true,
       slurm("1234", "cgroup", "0", "/system.slice/slurmstepd.scope/job_1234")},
      {"the uid's name beats SLURM_JOB_USER", in_cgroup(kSlurmV2, {{"SLURM_JOB_USER", "bob"}}), {}, false,
       slurm("1234", "cgroup", "0", "/system.slice/slurmstepd.scope/job_1234")},
      {"SLURM_JOB_USER names a uid without a name",
       with(nameless, [](ProcessFacts& p) { p.cgroup = kSlurmV2, p.env = {{"SLURM_JOB_USER", "bob"}}; }), {}, false,
       slurm("1234", "cgroup", "0", "/system.slice/slurmstepd.scope/job_1234", "bob")},
      {"a uid without a name is its digits", with(nameless, [](ProcessFacts& p) { p.cgroup = kSlurmV2; }), {}, false,
       slurm("1234", "cgroup", "0", "/system.slice/slurmstepd.scope/job_1234", "4000000")},
      {"v1's uid when the process's is unknown",
       with(gone, [](ProcessFacts& p) { p.found = true, p.cgroup = "/slurm/uid_1001/job_8/step_0/task_0"; }), {},
       false, slurm("8", "cgroup", "0", "/slurm/uid_1001/job_8", "1001")},
      // 2. SLURM_JOB_ID.
      {"slurm environment", with_env({{"SLURM_JOB_ID", "555"}, {"SLURM_STEP_ID", "3"}}), one_job, true,
       slurm("555", "environ", "3", "")},
      {"a step id that is not one", with_env({{"SLURM_JOB_ID", "555"}, {"SLURM_STEP_ID", "3 4"}}), {}, false,
       slurm("555", "environ", "", "")},
      {"a job id that is not one tells nothing", with_env({{"SLURM_JOB_ID", "55;rm -rf"}}), {}, false,
       tree("pid-200", "process-tree")},
      {"an empty job id tells nothing", with_env({{"SLURM_JOB_ID", ""}}), {}, false, tree("pid-200", "process-tree")},
      {"a job id over 64 bytes tells nothing", with_env({{"SLURM_JOB_ID", std::string(65, '1')}}), {}, false,
       tree("pid-200", "process-tree")},
      {"a job id of 64 bytes", with_env({{"SLURM_JOB_ID", std::string(64, '1')}}), {}, false,
       slurm(std::string(64, '1'), "environ", "", "")},
      // 3. dcgm-exporter's mapping.
      {"one job on the GPU", alice(), one_job, true, slurm("42", "hpc-job-mapping", "", "")},
      {"one job listed twice", alice(), {{"0", {"42", "42"}}}, false, slurm("42", "hpc-job-mapping", "", "")},
      {"two jobs tell nothing", alice(), {{"0", {"42", "43"}}}, false, tree("pid-200", "process-tree")},
      {"another GPU's job tells nothing", alice(), {{"1", {"42"}}}, false, tree("pid-200", "process-tree")},
      {"a job id that is not one", alice(), {{"0", {"4 2"}}}, false, tree("pid-200", "process-tree")},
      {"a process not seen", gone, one_job, false, slurm("42", "hpc-job-mapping", "", "", "")},
      // 4. The kubelet, and a pod's cgroup.
      {"the pod's own process", in_cgroup(kPodCgroup + "/0123abcd", {{"HOSTNAME", "train-0"}}), {}, true,
       pod_resources(kPodCgroup)},
      {"the pod's, its HOSTNAME unread", in_cgroup(kPodCgroup + "/0123abcd"), {}, true, pod_resources(kPodCgroup)},
      {"a process not seen on an assigned GPU", gone, {}, true,
       job("kubernetes", "ml/train-0", "pod-resources", [](JobOwner& o) {
         o.ns = "ml", o.pod = "train-0", o.container = "trainer", o.user = "";
       })},
      {"a host process on an assigned GPU", alice(), {}, true, pod_resources("")},
      {"another pod's process on an assigned GPU", in_cgroup(kPodCgroup + "/0123abcd", {{"HOSTNAME", "other-0"}}),
       {}, true, pod_cgroup("other-0")},
      {"a pod's process, no assignment", in_cgroup(kPodCgroup + "/0123abcd", {{"HOSTNAME", "train-0"}}), {}, false,
       pod_cgroup("train-0")},
      {"a pod's cgroup beats GPUENV_JOB_ID", in_cgroup(kPodCgroup, {{"GPUENV_JOB_ID", "run-1"}}), {}, false,
       pod_cgroup("")},
      // 5. gpuenv run.
      {"gpuenv run", with_env({{"GPUENV_JOB_ID", "run-7"}}), {}, false, tree("run-7", "environ")},
      {"gpuenv run, a job id that is not one", with_env({{"GPUENV_JOB_ID", "run/7"}}), {}, false,
       tree("pid-200", "process-tree")},
      // 6. The process tree.
      {"its tree", alice(), {}, false, tree("pid-200", "process-tree")},
      {"its tree's root's user",
       with(alice(), [](ProcessFacts& p) { p.root_user = "", p.root_uid = 4000000u; }), {}, false,
       job("none", "pid-200", "process-tree",
           [](JobOwner& o) { o.command = "torchrun", o.root_pid = 200, o.user = "4000000"; })},
      // Else unknown.
      {"not seen, nothing told", gone, {}, false, unknown("")},
      {"seen, no tree", with(alice(), [](ProcessFacts& p) { p.root_pid = 0; }), {}, false, unknown("alice")},
      {"a cgroup through a user's systemd", in_cgroup("/user.slice/user-1000.slice/user@1000.service/app.slice/"
                                                      "slurmstepd.scope/job_9/step_0"),
       {}, false, tree("pid-200", "process-tree")},
  };
  DeviceReading d = gpu(0, "GPU-0000");
  for (const AttributeRow& r : rows) check(r, d, nullptr);
}

TEST(Attribute, AMigDeviceIsItsGpusInTheMapping) {
  DeviceReading parent = gpu(1, "GPU-1111"), mig = gpu(1, "MIG-aaaa");
  mig.mig = 0, mig.gpu_instance_id = 1;
  PodDevices pods;
  JobOwner got = attribute(alice(), mig, &parent, {{"1", {"42"}}}, pods);
  EXPECT_EQ(got.job, "42");
  EXPECT_EQ(got.source, "hpc-job-mapping");
  got = attribute(alice(), mig, &parent, {{"0", {"42"}}}, pods);
  EXPECT_EQ(got.job, "pid-200");
}

TEST(Attribute, HostileTextBecomesSafeLabels) {
  struct AttributeRow {
    const char* name;
    ProcessFacts process;
    std::function<std::string(const JobOwner&)> field;
    std::string want;
  };
  std::string long_name(300, 'p');
  std::string accents;
  for (int i = 0; i < 100; ++i) accents += "\xC3\xA9";  // é, 2 bytes
  // Each row's process is its tree's root's: its user is the job's.
  const AttributeRow rows[] = {
      {"an escape in a user", with(alice(), [](ProcessFacts& p) { p.user = p.root_user = "\x1b[31mroot"; }),
       [](const JobOwner& o) { return o.user; }, kFffd + "[31mroot"},
      {"bytes that are not UTF-8 in a comm",
       with(alice(), [](ProcessFacts& p) { p.root_command = std::string("py\xff\xfe") + "thon" + "\xC3"; }),
       [](const JobOwner& o) { return o.command; }, "py" + kFffd + kFffd + "thon" + kFffd},
      {"a C1 control and an overlong form",
       with(alice(), [](ProcessFacts& p) { p.root_command = "a\xC2\x9B" "b\xC0\xAF"; }),
       [](const JobOwner& o) { return o.command; }, "a" + kFffd + "b" + kFffd + kFffd},
      {"a surrogate", with(alice(), [](ProcessFacts& p) { p.root_command = "\xED\xA0\x80"; }),
       [](const JobOwner& o) { return o.command; }, kFffd + kFffd + kFffd},
      {"a NUL and a newline", with(alice(), [](ProcessFacts& p) { p.user = p.root_user = std::string("a\0b\nc", 5); }),
       [](const JobOwner& o) { return o.user; }, "a" + kFffd + "b" + kFffd + "c"},
      {"valid UTF-8 passes",
       with(alice(), [](ProcessFacts& p) { p.user = p.root_user = "jos\xC3\xA9-\xE2\x82\xAC-\xF0\x9F\x9A\x80"; }),
       [](const JobOwner& o) { return o.user; }, "jos\xC3\xA9-\xE2\x82\xAC-\xF0\x9F\x9A\x80"},
      {"a pod name over 128 bytes", in_cgroup(kPodCgroup, {{"HOSTNAME", long_name}}),
       [](const JobOwner& o) { return o.pod; }, std::string(128, 'p')},
      {"cut on a character's boundary", with(alice(), [&](ProcessFacts& p) { p.user = p.root_user = "x" + accents; }),
       [](const JobOwner& o) { return o.user; }, "x" + accents.substr(0, 126)},
      {"a job whose name holds a control tells nothing", in_cgroup("/system.slice/slurmstepd.scope/job_5\x1b/step_0"),
       [](const JobOwner& o) { return o.job + "|" + o.cgroup; }, "pid-200|"},
      {"a Slurm job under an odd parent keeps its job, not its cgroup",
       in_cgroup("/odd\x01/system.slice/slurmstepd.scope/job_5/step_0"),
       [](const JobOwner& o) { return o.job + "|" + o.cgroup; }, "5|"},
  };
  PodDevices pods;
  for (const AttributeRow& r : rows) {
    JobOwner got = attribute(r.process, gpu(0, "GPU-0000"), nullptr, {}, pods);
    EXPECT_EQ(r.field(got), r.want) << r.name;
    for (const std::string* s : {&got.scheduler, &got.job, &got.user, &got.step, &got.ns, &got.pod, &got.container,
                                 &got.command, &got.source, &got.cgroup})
      EXPECT_LE(s->size(), 128u) << r.name;
  }
}

TEST(Attribute, SlurmCgroups) {
  struct AttributeRow {
    std::string path;
    std::optional<SlurmCgroup> want;
  };
  const AttributeRow rows[] = {
      {kSlurmV2, SlurmCgroup{"1234", "0", std::nullopt, "/system.slice/slurmstepd.scope/job_1234"}},
      {"/system.slice/node1_slurmstepd.scope/job_55/step_batch/user/task_0",
       SlurmCgroup{"55", "batch", std::nullopt, "/system.slice/node1_slurmstepd.scope/job_55"}},
      {"/system.slice/slurmstepd.scope/job_1234/step_extern/slurm_processes",
       SlurmCgroup{"1234", "extern", std::nullopt, "/system.slice/slurmstepd.scope/job_1234"}},
      {"/system.slice/slurmstepd.scope/job_1234/step_interactive",
       SlurmCgroup{"1234", "interactive", std::nullopt, "/system.slice/slurmstepd.scope/job_1234"}},
      {"/system.slice/slurmstepd.scope/job_1234",
       SlurmCgroup{"1234", "", std::nullopt, "/system.slice/slurmstepd.scope/job_1234"}},
      {"/slurm/uid_1000/job_1234/step_0/task_0", SlurmCgroup{"1234", "0", 1000u, "/slurm/uid_1000/job_1234"}},
      {"/slurm_node1/uid_1000/job_7/step_batch", SlurmCgroup{"7", "batch", 1000u, "/slurm_node1/uid_1000/job_7"}},
      {"/slurm/uid_1000/job_7", SlurmCgroup{"7", "", 1000u, "/slurm/uid_1000/job_7"}},
      // A job inside a job: the outer one, which the user cannot name.
      {"/system.slice/slurmstepd.scope/job_1/step_0/user/task_0/slurmstepd.scope/job_2",
       SlurmCgroup{"1", "0", std::nullopt, "/system.slice/slurmstepd.scope/job_1"}},
      {"/system.slice/slurmstepd.scope/system", std::nullopt},
      {"/system.slice/slurmstepd.scope", std::nullopt},
      {"/system.slice/slurmstepd.scope/job_12x/step_0", std::nullopt},
      {"/system.slice/slurmstepd.scope/job_/step_0", std::nullopt},
      {"/system.slice/slurmstepd.scope/job_123456789012345678901", std::nullopt},
      {"/slurm/uid_x/job_7/step_0", std::nullopt},
      {"/slurm/uid_99999999999/job_7/step_0", std::nullopt},
      {"/slurm/job_7/step_0", std::nullopt},
      {"/user.slice/user-1000.slice/user@1000.service/slurmstepd.scope/job_7", std::nullopt},
      {"/system.slice/slurmd.service", std::nullopt},
      {"", std::nullopt},
      {"/", std::nullopt},
  };
  for (const AttributeRow& r : rows) EXPECT_EQ(slurm_cgroup(r.path), r.want) << r.path;
}

TEST(Attribute, KubepodsCgroups) {
  const std::string systemd_uid = "1b2c3d4e_aaaa_bbbb_cccc_123456789abc";
  struct AttributeRow {
    std::string path;
    std::optional<KubepodsCgroup> want;
  };
  const AttributeRow rows[] = {
      {"/kubepods/burstable/pod" + kPodUid + "/0123abcd",
       KubepodsCgroup{kPodUid, "0123abcd", "/kubepods/burstable/pod" + kPodUid}},
      {"/kubepods/besteffort/pod" + kPodUid, KubepodsCgroup{kPodUid, "", "/kubepods/besteffort/pod" + kPodUid}},
      {"/kubepods/pod" + kPodUid + "/0123abcd", KubepodsCgroup{kPodUid, "0123abcd", "/kubepods/pod" + kPodUid}},
      {"/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" + systemd_uid +
           ".slice/cri-containerd-0123abcd.scope",
       KubepodsCgroup{kPodUid, "0123abcd",
                      "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" + systemd_uid + ".slice"}},
      {"/kubepods.slice/kubepods-pod" + systemd_uid + ".slice/crio-0123abcd.scope",
       KubepodsCgroup{kPodUid, "0123abcd", "/kubepods.slice/kubepods-pod" + systemd_uid + ".slice"}},
      {"/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" + systemd_uid + ".slice",
       KubepodsCgroup{kPodUid, "", "/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" + systemd_uid +
                                       ".slice"}},
      // Nested under a node's container (kind), and a static pod's hash.
      {"/docker/abc/kubepods/burstable/pod0123456789abcdef0123456789abcdef/ff",
       KubepodsCgroup{"0123456789abcdef0123456789abcdef", "ff",
                      "/docker/abc/kubepods/burstable/pod0123456789abcdef0123456789abcdef"}},
      // From inside a private cgroup namespace: the host's path is rebuilt from the slice's name.
      {"/../../kubepods-burstable.slice/kubepods-burstable-pod" + systemd_uid + ".slice/cri-containerd-0123abcd.scope",
       KubepodsCgroup{kPodUid, "0123abcd",
                      "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" + systemd_uid + ".slice"}},
      {"/../kubepods-pod" + systemd_uid + ".slice/crio-0123abcd.scope",
       KubepodsCgroup{kPodUid, "0123abcd", "/kubepods.slice/kubepods-pod" + systemd_uid + ".slice"}},
      {"/../../kubepods-burstable.slice", std::nullopt},
      {"/kubepods/burstable", std::nullopt},
      {"/kubepods/burstable/podman", std::nullopt},
      {"/kubepods/burstable/pod", std::nullopt},
      {"/kubepods/burstable/pod" + kPodUid + "\x1b", std::nullopt},
      {"/kubepods.slice/kubepods-burstable.slice", std::nullopt},
      {"/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod.slice", std::nullopt},
      {"/kubepods.slice/kubepods-burstable.slice/other-pod" + systemd_uid + ".slice", std::nullopt},
      {"/user.slice/user-1000.slice/user@1000.service/kubepods/pod" + kPodUid, std::nullopt},
      {"/system.slice/containerd.service", std::nullopt},
      {"", std::nullopt},
  };
  for (const AttributeRow& r : rows) EXPECT_EQ(kubepods_cgroup(r.path), r.want) << r.path;
}

}  // namespace
}  // namespace gpuenv::fleet
