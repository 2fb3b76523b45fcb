// export: a Prometheus exporter (docs/metrics.md). The sequence is
// flow/export.h's; this file parses the flags into its request and hands it
// the real environment: NVML, the kubelet, the machine as sensed.
#include <cmath>
#include <cstdlib>

#include "cli/commands.h"
#include "cli/context.h"
#include "flow/export.h"
#include "sys/env.h"

namespace gpuenv {
namespace {

int run_export(Context* ctx, const flow::ExportRequest& request) {
  flow::NvmlReadings gpus(ctx->sense_options().nvml_library, ctx->sense_options().dcgm_library);
  flow::KubeletPods pods(env_or(kKubeletHelperEnv, ""));
  flow::HostProcesses processes({request.proc_root, request.cgroup_root}, request.hpc_job_mapping_dir);
  flow::ExportEnv env;
  env.gpus = &gpus;
  env.pods = &pods;
  env.processes = &processes;
  env.sense = [ctx](Machine* m, Options* o) {
    if (!ctx->load_machine(m)) return false;
    *o = ctx->plan_options(*m);
    return true;
  };
  return flow::run_export(request, env);
}

// CLI::Range lets NaN through (every comparison with it is false), and
// NaN milliseconds would read NVML in a tight loop.
CLI::Validator finite_seconds() {
  return CLI::Validator(
      [](std::string& text) {
        double v = std::strtod(text.c_str(), nullptr);
        return std::isfinite(v) ? std::string() : "\"" + text + "\" is not a finite number of seconds";
      },
      "SECONDS");
}

}  // namespace

std::function<int()> setup_export(CLI::App* sub, Context* ctx) {
  auto f = std::make_shared<flow::ExportRequest>();
  sub->add_option("--listen", f->listen,
                  "Address to serve on (default 127.0.0.1:9400; [::1]:9400 for IPv6, :9400 for every address)")
      ->option_text("HOST:PORT");
  sub->add_option("--interval", f->interval_s, "Seconds between NVML reads (default 5)")
      ->check(finite_seconds())
      ->check(CLI::Range(0.1, 3600.0))
      ->option_text("SECONDS");
  sub->add_option("--metrics", f->metrics,
                  "Name sets to serve, comma-separated: gpuenv (gpuenv_gpu_*), dcgm (dcgm-exporter's DCGM_FI_*), "
                  "jobs (gpuenv_job_*: every process on the GPUs attributed to its job, measured and judged; "
                  "hpc_job labels); default all three")
      ->delimiter(',')
      ->check(CLI::IsMember({"gpuenv", "dcgm", "jobs"}))
      ->option_text("gpuenv,dcgm,jobs");
  sub->add_option("--proc-root", f->proc_root,
                  "The host's /proc, where NVML's PIDs are told (default /proc; in a container, the host's "
                  "mounted read-only, or run with the host's PID namespace)")
      ->envname("GPUENV_PROC_ROOT")
      ->option_text("DIR");
  sub->add_option("--cgroup-root", f->cgroup_root, "The host's cgroup tree, for each job's CPU (default /sys/fs/cgroup)")
      ->envname("GPUENV_CGROUP_ROOT")
      ->option_text("DIR");
  sub->add_option("--hpc-job-mapping-dir", f->hpc_job_mapping_dir,
                  "dcgm-exporter's Slurm mapping directory: files named by GPU index holding job ids, as a prolog "
                  "writes them (optional: Slurm jobs are told from their cgroups without it)")
      ->envname("GPUENV_HPC_JOB_MAPPING_DIR")
      ->option_text("DIR");
  sub->add_option("--job-retention", f->job_retention_s,
                  "Seconds an ended job's gpuenv_job_* series stay before they go (default 300)")
      ->check(finite_seconds())
      ->check(CLI::Range(0.0, 86400.0))
      ->option_text("SECONDS");
  sub->add_option("-f,--collectors", f->counters_file,
                  "dcgm-exporter's counters CSV (FIELD, TYPE, HELP a line; # comments): the DCGM_FI_* series to "
                  "serve, with its types and help (default: dcgm-exporter's default counters)")
      ->option_text("FILE");
  sub->add_option("--web-config-file", f->web_config_file,
                  "Prometheus exporter-toolkit web config: tls_server_config (HTTPS) and basic_auth_users "
                  "(bcrypt); a bad file exits 3, never serving plain HTTP instead")
      ->option_text("FILE");
  sub->add_option("--hostname-label", f->hostname_label,
                  "The node label's name on the DCGM_FI_* and gpuenv_job_* series: hostname (dcgm-exporter 4.x, the default) or "
                  "Hostname (dcgm-exporter before its rename, for dashboards that still select it)")
      ->check(CLI::IsMember({"hostname", "Hostname"}))
      ->option_text("hostname|Hostname");
  sub->add_option("--pod-resources-socket", f->pod_resources_socket,
                  "The kubelet's pod-resources socket, for pod, namespace and container labels on the GPUs "
                  "assigned to pods (default /var/lib/kubelet/pod-resources/kubelet.sock; none there: no "
                  "labels; \"\": never)")
      ->envname("GPUENV_POD_RESOURCES_SOCKET")
      ->option_text("PATH");
  sub->footer(
      "Serves /metrics (Prometheus text format) and /health until SIGTERM or SIGINT; SIGHUP is logged and "
      "ignored. Exit status: 0 ended by a "
      "signal, 1 cannot listen or load NVML, 2 bad command line, 3 bad --python, -f or --web-config-file.");
  // What sensing reads (the plan metric is the machine's own plan: --ptx and
  // --override belong to the process that applies a plan; no colour here;
  // no --machine: the exporter reads this machine's GPUs live).
  ctx->add_common_flags(sub, kSensingFlags & ~kFlagMachine);
  return [ctx, f] { return run_export(ctx, *f); };
}

}  // namespace gpuenv
