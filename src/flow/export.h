// `gpuenv export`'s sequence (docs/metrics.md): listen, decide the plan
// once, read NVML every interval, list the kubelet's pods, and serve
// /metrics until SIGTERM or SIGINT. Like ninja's Builder, which is handed its
// CommandRunner, DiskInterface, BuildLog and Status, the sequence is handed
// what it reads and where it speaks (ExportEnv), so a test runs it whole
// with fakes; cli/cmd_export.cc only parses the flags into an ExportRequest.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "act/log.h"
#include "flow/export_jobs.h"
#include "model/gpu_reading.h"
#include "model/machine.h"
#include "model/plan.h"
#include "model/kubelet/pod_devices.h"
#include "sense/host/node_name.h"
#include "sense/kubelet/pod_resources.h"
#include "sense/nvml/nvml_sampler.h"

namespace gpuenv::flow {

/// What `gpuenv export` was asked: its flags, parsed.
struct ExportRequest {
  std::string listen = "127.0.0.1:9400";  // dcgm-exporter's port, on loopback only
  double interval_s = 5;
  std::vector<std::string> metrics = {"gpuenv", "dcgm", "jobs"};  // the name sets to serve
  std::string pod_resources_socket = kKubeletPodResourcesSocket;  // "": no pod labels
  // The jobs (export_jobs.h): where the host's processes are read, and how long an ended job's series stay.
  std::string proc_root = "/proc", cgroup_root = "/sys/fs/cgroup";
  std::string hpc_job_mapping_dir;  // dcgm-exporter's --hpc-job-mapping-dir; "": none
  double job_retention_s = 300;
  std::string counters_file;    // dcgm-exporter's -f: the DCGM fields to serve; "": its default counters
  std::string web_config_file;  // exporter-toolkit's --web-config-file: TLS and basic auth; "": plain HTTP
  std::string hostname_label = "hostname";  // "hostname" (dcgm-exporter 4.x) or "Hostname" (before)
};

/// The GPUs' readings, a round every interval (NvmlReadings below).
class GpuReadings {
 public:
  virtual ~GpuReadings() = default;
  /// Takes the first round and starts the rest; false with *err.
  virtual bool start(std::chrono::milliseconds interval, Problem* err) = 0;
  /// The newest round, without waiting for one.
  virtual std::shared_ptr<const Readings> latest() const = 0;
  virtual void stop() = 0;
};

/// Which container holds which GPU, listed every interval (KubeletPods below).
class PodAssignments {
 public:
  virtual ~PodAssignments() = default;
  /// Lists now and then every `interval`, telling `on_round` after each.
  virtual void start(const std::string& socket, std::chrono::milliseconds interval,
                     PodResourcesWatcher::OnRound on_round) = 0;
  /// The last list's assignments; empty while there are none to trust.
  virtual std::shared_ptr<const PodDevices> latest() const = 0;
  virtual void stop() = 0;
};

/// What the sequence is handed: the real ones in a command, fakes in a test.
struct ExportEnv {
  GpuReadings* gpus = nullptr;
  PodAssignments* pods = nullptr;
  ProcessSource* processes = nullptr;  // nullptr: no jobs
  /// This machine and the options its plan is decided with; false when the
  /// machine cannot be sensed (the reason already said).
  std::function<bool(Machine*, Options*)> sense;
  std::function<double()> clock = steady_seconds;     // seconds: a scrape's age
  std::function<std::string()> hostname = node_name;  // the node's label (hostname_label's value)
  std::function<double()> unix_clock = unix_seconds;  // a job's start time
  MessageSink log = log_message;                      // every line the exporter says
};

/// Runs the exporter. Blocks SIGTERM, SIGINT and SIGHUP in the calling
/// thread before any thread starts (the readings' and pods' threads inherit
/// that), ignores SIGPIPE, and serves on the calling thread until SIGTERM or
/// SIGINT; SIGHUP is said and ignored. Returns the exit status: kExitOk
/// ended by a signal, kExitFailure cannot listen, start the readings or
/// serve, kExitUsage a bad listen address, kExitBadInput env.sense failed
/// or the counters CSV or web config cannot be read or used.
int run_export(const ExportRequest& request, const ExportEnv& env);

/// NVML's readings: an NvmlSampler over the library at `nvml_library`.
class NvmlReadings : public GpuReadings {
 public:
  explicit NvmlReadings(std::string nvml_library, std::string dcgm_library = "")
      : library_(std::move(nvml_library)), dcgm_library_(std::move(dcgm_library)) {}
  bool start(std::chrono::milliseconds interval, Problem* err) override;
  std::shared_ptr<const Readings> latest() const override { return sampler_.latest(); }
  void stop() override { sampler_.stop(); }

 private:
  std::string library_, dcgm_library_;  // dcgm "": profiling fields from NVML GPM only
  NvmlSampler sampler_;
};

/// The kubelet's pod-resources API: a PodResourcesWatcher whose calls end
/// after a second; libprotobuf's and gRPC's own lines go through log_message.
class KubeletPods : public PodAssignments {
 public:
  /// `helper_env`: $GPUENV_KUBELET_HELPER, where the gRPC client is (find_kubelet_helper).
  explicit KubeletPods(std::string helper_env = "") : helper_env_(std::move(helper_env)) {}
  void start(const std::string& socket, std::chrono::milliseconds interval,
             PodResourcesWatcher::OnRound on_round) override;
  std::shared_ptr<const PodDevices> latest() const override { return watcher_.latest(); }
  void stop() override { watcher_.stop(); }

 private:
  std::string helper_env_;
  PodResourcesWatcher watcher_;
};

}  // namespace gpuenv::flow
