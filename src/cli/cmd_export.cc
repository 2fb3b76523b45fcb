// export: a Prometheus exporter (docs/metrics.md). A thread reads NVML
// every --interval into a cache; /metrics renders the newest round, so a
// scrape never waits on NVML. SIGTERM and SIGINT end it with status 0.
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>

#include "act/gpu_metrics.h"
#include "act/serve/http_server.h"
#include "act/serve/http_server_limits.h"
#include "act/log.h"
#include "act/rate_limited_log.h"
#include "act/render/prometheus_text.h"
#include "cli/context.h"
#include "cli/commands.h"
#include "model/exit_codes.h"
#include "decide/decide.h"
#include "sense/kubelet/pod_resources.h"
#include "sense/nvml/nvml_sampler.h"
#include "sys/signals.h"

namespace gpuenv {
namespace {

struct ExportFlags {
  std::string listen = "127.0.0.1:9400";  // dcgm-exporter's port, on loopback only
  double interval_s = 5;
  std::vector<std::string> metrics = {"gpuenv", "dcgm"};  // the name sets to serve
  std::string pod_resources_socket = kKubeletPodResourcesSocket;  // "": no pod labels
};

// The kubelet's List may take this long before a refresh gives up on it.
constexpr std::chrono::milliseconds kKubeletDeadline{1000};

// dcgm-exporter's Hostname: the node's name in Kubernetes ($NODE_NAME, as
// its DaemonSet sets it), else the host's.
std::string exporter_hostname() {
  if (const char* node = std::getenv("NODE_NAME"); node && *node) return node;
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0) return "";
  return buf;
}

constexpr const char* kIndexPage =
    "<!DOCTYPE html>\n<html><head><title>gpuenv exporter</title></head>\n"
    "<body><h1>gpuenv exporter</h1><p><a href=\"/metrics\">/metrics</a></p></body></html>\n";

// The plan gpuenv decides for this machine, as it stands at start.
bool exporter_info(Context* ctx, ExporterInfo* info) {
  Machine m;
  if (!ctx->load_machine(&m)) return false;
  info->version = GPUENV_VERSION;
  info->hostname = exporter_hostname();
  for (const Setting& s : decide(m, ctx->plan_options(m)).settings) info->plan.emplace_back(s.name, s.value);
  return true;
}

struct Sources {
  const NvmlSampler& sampler;
  const PodResourcesWatcher& pods;
};

HttpResponse respond(const std::string& path, const Sources& from, const ExporterInfo& info) {
  if (path == "/metrics")
    return {200, prometheus::kContentType,
            render_gpu_metrics(*from.sampler.latest(), info, steady_seconds(), *from.pods.latest())};
  if (path == "/") return {200, "text/html; charset=utf-8", kIndexPage};
  return {404, "text/plain; charset=utf-8", "not found; the metrics are at /metrics\n"};
}

void block_stop_signals() {
  sys::block_signals({SIGTERM, SIGINT, SIGHUP});  // the sampler thread inherits it
  signal(SIGPIPE, SIG_IGN);                    // a scraper that hangs up is no reason to die
}

// "listening on http://127.0.0.1:9400/metrics (...)", or for ":9400" the
// addresses it covers and the URL that reaches it from this machine.
void log_listening(const ListenAddress& bound, std::size_t devices, double interval_s) {
  std::string port = std::to_string(bound.port);
  std::string where = bound.any ? ":" + port + ", every IPv4" + (bound.ipv6 ? " and IPv6" : "") +
                                      " address (http://127.0.0.1:" + port + "/metrics from this machine)"
                                : "http://" + format_listen_address(bound) + "/metrics";
  char detail[96];
  std::snprintf(detail, sizeof detail, "%zu GPU and MIG devices, NVML read every %g s", devices, interval_s);
  log_message(Severity::kInfo, "listening", "export: listening on " + where + " (" + detail + ")",
              {{"address", format_listen_address(bound)},
               {"all_addresses", bound.any},
               {"port", bound.port},
               {"devices", devices},
               {"interval_s", interval_s}});
}

// The pod watcher's lines: a line is said again at most once a minute (of
// the same kind: found, failing with one gRPC code, names refused, a
// library's own message), with how many were left out (docs/metrics.md).
constexpr std::chrono::seconds kPodLogEvery{60};

class PodWatchLog {
 public:
  explicit PodWatchLog(std::string socket) : socket_(std::move(socket)) {}
  void round(const PodListRound& r, bool changed);

 private:
  void found(const PodListRound& r);
  void failed(const PodListRound& r);
  void refused(const PodListRound& r);

  std::string socket_;
  std::string last_error_;
  RateLimitedLog found_{kPodLogEvery, "pod_resources"}, refused_{kPodLogEvery, "pod_resources"};
  std::map<int, RateLimitedLog> failed_;  // by gRPC status code
};

void PodWatchLog::round(const PodListRound& r, bool changed) {
  if (r.status == PodListStatus::kOk && changed) found(r);
  if (r.status == PodListStatus::kFailed && (changed || r.error != last_error_)) failed(r);
  if (r.refused > 0) refused(r);
  last_error_ = r.error;
}

void PodWatchLog::found(const PodListRound& r) {
  found_.log("export: pod labels from the kubelet at " + socket_ + " (" + std::to_string(r.devices) +
                 " GPU and MIG devices assigned)",
             Severity::kInfo, {{"socket", socket_}, {"devices", r.devices}});
}

void PodWatchLog::failed(const PodListRound& r) {
  RateLimitedLog& log = failed_.try_emplace(r.kind, kPodLogEvery, "pod_resources").first->second;
  log.log("export: no pod labels: " + r.error + "; retrying every interval", Severity::kWarning,
          {{"socket", socket_}, {"error", r.error}});
}

void PodWatchLog::refused(const PodListRound& r) {
  refused_.log("export: " + std::to_string(r.refused) + " GPU and MIG devices left without pod labels: " +
                   r.refusal + " (the kubelet at " + socket_ + ")",
               Severity::kWarning, {{"socket", socket_}, {"refused", r.refused}, {"reason", r.refusal}});
}

// libprotobuf's and gRPC's own messages, in gpuenv's format and limited
// like the watcher's (kept for the process's life: a library thread may
// log while it exits).
void route_library_logs() {
  static auto* logs = new std::map<std::string, RateLimitedLog>;
  static auto* mutex = new std::mutex;
  route_kubelet_library_logs([](Severity level, const std::string& library, const std::string& text) {
    RateLimitedLog* log;
    {
      std::lock_guard<std::mutex> lock(*mutex);
      log = &logs->try_emplace(library, kPodLogEvery, "library").first->second;
    }
    log->log("export: " + library + ": " + text, level, {{"library", library}});
  });
}

void start_pod_watcher(const ExportFlags& f, std::chrono::milliseconds interval, PodWatchLog* log,
                       PodResourcesWatcher* w) {
  if (f.pod_resources_socket.empty()) return;
  route_library_logs();
  w->start(f.pod_resources_socket, interval, kKubeletDeadline,
           [log](const PodListRound& r, bool changed) { log->round(r, changed); });
}

int serve(const ExportFlags& f, int fd, const ListenAddress& bound, NvmlSampler* sampler,
          PodResourcesWatcher* pods, const ExporterInfo& info) {
  std::size_t devices = sampler->latest()->devices.size();
  auto ready = [&] { log_listening(bound, devices, f.interval_s); };
  RateLimitedLog hangups(std::chrono::seconds(10), "http");
  auto hangup = [&] {
    hangups.log("export: SIGHUP ignored: the exporter reads NVML live and keeps serving; restart it to decide "
                "gpuenv_plan_info again",
                Severity::kInfo);
  };
  std::string err;
  Sources from{*sampler, *pods};
  bool ok = serve_http(
      fd, [&](const std::string& path) { return respond(path, from, info); }, ready, hangup, &err);
  pods->stop();
  sampler->stop();
  if (!ok) print_error("export: " + err);
  return ok ? kExitOk : kExitFailure;
}

int run_export(Context* ctx, const ExportFlags& f) {
  ListenAddress address, bound;
  std::string err;
  if (!parse_listen_address(f.listen, &address, &err)) {
    print_error("export: " + err);
    return kExitUsage;
  }
  block_stop_signals();
  int fd = listen_tcp(address, &bound, &err);
  if (fd < 0) {
    print_error("export: cannot listen: " + err + "; stop what holds the port or pick another with --listen");
    return kExitFailure;
  }
  ExporterInfo info;
  if (!exporter_info(ctx, &info)) return kExitBadInput;
  info.gpuenv_names = std::find(f.metrics.begin(), f.metrics.end(), "gpuenv") != f.metrics.end();
  info.dcgm_names = std::find(f.metrics.begin(), f.metrics.end(), "dcgm") != f.metrics.end();
  NvmlSampler sampler;
  Problem p;
  auto interval = std::chrono::milliseconds(std::lround(f.interval_s * 1000));
  if (!sampler.start(ctx->sense_options().nvml_library, interval, &p)) {
    print_error("export: " + p.message + (p.fix.empty() ? "" : "; " + p.fix));
    return kExitFailure;
  }
  PodWatchLog pod_log(f.pod_resources_socket);
  PodResourcesWatcher pods;  // after pod_log: it stops first
  start_pod_watcher(f, interval, &pod_log, &pods);
  return serve(f, fd, bound, &sampler, &pods, info);
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
  auto f = std::make_shared<ExportFlags>();
  sub->add_option("--listen", f->listen,
                  "Address to serve on (default 127.0.0.1:9400; [::1]:9400 for IPv6, :9400 for every address)")
      ->option_text("HOST:PORT");
  sub->add_option("--interval", f->interval_s, "Seconds between NVML reads (default 5)")
      ->check(finite_seconds())
      ->check(CLI::Range(0.1, 3600.0))
      ->option_text("SECONDS");
  sub->add_option("--metrics", f->metrics,
                  "Name sets to serve, comma-separated: gpuenv (gpuenv_gpu_*), dcgm (dcgm-exporter's DCGM_FI_*); "
                  "default both")
      ->delimiter(',')
      ->check(CLI::IsMember({"gpuenv", "dcgm"}))
      ->option_text("gpuenv,dcgm");
  sub->add_option("--pod-resources-socket", f->pod_resources_socket,
                  "The kubelet's pod-resources socket, for pod, namespace and container labels on the GPUs "
                  "assigned to pods (default /var/lib/kubelet/pod-resources/kubelet.sock; none there: no "
                  "labels; \"\": never)")
      ->envname("GPUENV_POD_RESOURCES_SOCKET")
      ->option_text("PATH");
  sub->footer(
      "Serves /metrics (Prometheus text format) until SIGTERM or SIGINT; SIGHUP is logged and ignored. "
      "Exit status: 0 ended by a "
      "signal, 1 cannot listen or load NVML, 2 bad command line, 3 bad --python.");
  // What sensing reads (the plan metric is the machine's own plan: --ptx and
  // --override belong to the process that applies a plan; no colour here;
  // no --machine: the exporter reads this machine's GPUs live).
  ctx->add_common_flags(sub, kSensingFlags & ~kFlagMachine);
  return [ctx, f] { return run_export(ctx, *f); };
}

}  // namespace gpuenv
