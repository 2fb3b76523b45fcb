#include "flow/export.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <map>
#include <mutex>
#include <optional>

#include "act/export_files.h"
#include "act/render/gpu_metrics.h"
#include "act/render/job_metrics.h"
#include "act/rate_limited_log.h"
#include "act/render/prometheus_text.h"
#include "act/serve/basic_auth.h"
#include "act/serve/http_server.h"
#include "act/serve/tls_server.h"
#include "decide/decide.h"
#include "decide/export/profiling.h"
#include "model/exit_codes.h"
#include "sys/periodic.h"
#include "sys/signals.h"

namespace gpuenv::flow {
namespace {

// The kubelet's List may take this long before a refresh gives up on it.
constexpr std::chrono::milliseconds kKubeletDeadline{1000};

// The pod watcher's lines: a line is said again at most once a minute (of
// the same kind: found, failing with one gRPC code, names refused, a
// library's own message), with how many were left out (docs/metrics.md).
constexpr std::chrono::seconds kPodLogEvery{60};

constexpr const char* kIndexPage =
    "<!DOCTYPE html>\n<html><head><title>gpuenv exporter</title></head>\n"
    "<body><h1>gpuenv exporter</h1><p><a href=\"/metrics\">/metrics</a></p></body></html>\n";

int fail(const ExportEnv& env, const std::string& text, int code) {
  env.log(Severity::kError, "error", "export: " + text, nlohmann::ordered_json::object());
  return code;
}

bool wants(const std::vector<std::string>& sets, const char* name) {
  return std::find(sets.begin(), sets.end(), name) != sets.end();
}

// What the exporter says besides the readings: the plan gpuenv decides for
// this machine, as it stands at start.
bool exporter_info(const ExportRequest& req, const ExportEnv& env, ExporterInfo* info) {
  Machine m;
  Options o;
  if (!env.sense(&m, &o)) return false;
  info->version = GPUENV_VERSION;
  info->hostname = env.hostname();
  for (const Setting& s : decide(m, o).settings) info->plan.emplace_back(s.name, s.value);
  info->gpuenv_names = wants(req.metrics, "gpuenv");
  info->dcgm_names = wants(req.metrics, "dcgm");
  info->hostname_label = req.hostname_label;
  return true;
}

// -f: the DCGM fields the file chooses; a line gpuenv cannot serve is said
// and left out. False (said) when the file cannot be read or parsed.
bool counters(const ExportRequest& req, const ExportEnv& env, ExporterInfo* info) {
  if (req.counters_file.empty()) return true;
  std::vector<DcgmCounter> c;
  std::string err;
  if (!load_dcgm_counters(req.counters_file, &c, &err)) return fail(env, err, kExitBadInput), false;
  for (const std::string& line : dcgm_unservable(c))
    env.log(Severity::kWarning, "counters", "export: -f " + req.counters_file + ": " + line + "; not served",
            {{"file", req.counters_file}, {"field", line}});
  info->dcgm_counters = std::move(c);
  return true;
}

// --web-config-file: TLS and basic auth. False (said) when it cannot be
// read or used: the exporter never falls back to plain HTTP.
struct WebSecurity {
  std::unique_ptr<TlsServer> tls;
  std::unique_ptr<BasicAuth> auth;
  HttpSecurity http;
};

bool web_security(const ExportRequest& req, const ExportEnv& env, WebSecurity* out) {
  out->http.open_paths = {"/health"};
  if (req.web_config_file.empty()) return true;
  WebConfig c;
  std::string err;
  if (!load_web_config(req.web_config_file, &c, &err)) return fail(env, err, kExitBadInput), false;
  if (c.tls && !(out->tls = TlsServer::create(*c.tls, &err)))
    return fail(env, "--web-config-file " + req.web_config_file + ": " + err, kExitBadInput), false;
  out->auth = std::make_unique<BasicAuth>(c.users);
  out->http.tls = out->tls.get();
  out->http.auth = out->auth.get();
  return true;
}

// The /metrics body, rendered once a round on the renderer's thread (a
// scrape copies it): everything but the one series that changes between
// scrapes, gpuenv_exporter_scrape_age_seconds, which comes between `head`
// and `tail`.
struct RenderedMetrics {
  double sampled_at = 0;
  std::string head, tail;
};

constexpr const char* kScrapeAge = "gpuenv_exporter_scrape_age_seconds";

std::shared_ptr<const RenderedMetrics> render_round(const Readings& r, const ExporterInfo& info,
                                                    const PodDevices& pods, const JobsSnapshot* jobs) {
  std::vector<prometheus::MetricFamily> families =
      gpu_metric_families(r, info, r.sampled_at, pods, jobs ? jobs->hpc_jobs : HpcJobs());
  auto age = std::find_if(families.begin(), families.end(), [](const auto& f) { return f.name == kScrapeAge; });
  auto out = std::make_shared<RenderedMetrics>();
  out->sampled_at = r.sampled_at;
  out->head = prometheus::render({families.begin(), age});
  out->tail = prometheus::render({age == families.end() ? age : age + 1, families.end()});
  if (jobs) out->tail += prometheus::render(job_metric_families(jobs->jobs, info));
  return out;
}

// Renders each new NVML round (and takes the jobs' round first, when they
// are tracked) on its own thread, every interval.
class MetricsRenderer {
 public:
  MetricsRenderer(const ExportEnv& env, const ExporterInfo& info, JobTracker* jobs,
                  const std::atomic<bool>* pods_asked)
      : env_(env), info_(info), jobs_(jobs), pods_asked_(pods_asked) {}
  ~MetricsRenderer() { stop(); }
  /// Renders the newest round now, then every interval on the thread.
  void start(std::chrono::milliseconds interval) {
    round();
    thread_.start(interval, [this] { round(); });
  }
  void stop() { thread_.stop(); }
  std::string body(double now) const {
    std::shared_ptr<const RenderedMetrics> m;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      m = latest_;
    }
    prometheus::MetricFamily age{kScrapeAge, prometheus::Type::kGauge, "Age of the NVML sample this scrape returns",
                                 {{{}, now - m->sampled_at}}};
    return m->head + prometheus::render({age}) + m->tail;
  }

 private:
  void round() {
    std::shared_ptr<const Readings> r = env_.gpus->latest();
    if (latest_ && r->sampled_at == latest_->sampled_at) return;  // only this thread writes latest_
    std::shared_ptr<const PodDevices> pods = env_.pods->latest();
    std::shared_ptr<const JobsSnapshot> jobs;
    if (jobs_) jobs = *pods_asked_ ? jobs_->update(*r, *pods) : std::make_shared<JobsSnapshot>();
    std::shared_ptr<const RenderedMetrics> m = render_round(*r, info_, *pods, jobs.get());
    std::lock_guard<std::mutex> lock(mutex_);
    latest_ = std::move(m);
  }

  const ExportEnv& env_;
  const ExporterInfo& info_;
  JobTracker* jobs_;
  const std::atomic<bool>* pods_asked_;  // the jobs wait for it
  mutable std::mutex mutex_;  // latest_
  std::shared_ptr<const RenderedMetrics> latest_;
  Periodic thread_;  // last: stopped first
};

HttpResponse respond(const std::string& path, const ExportEnv& env, const MetricsRenderer& metrics) {
  if (path == "/metrics") return {200, prometheus::kContentType, metrics.body(env.clock())};
  // dcgm-exporter's /health answers 200 with these two letters, whatever the state.
  if (path == "/health") return {200, "text/plain; charset=utf-8", "KO"};
  if (path == "/") return {200, "text/html; charset=utf-8", kIndexPage};
  return {404, "text/plain; charset=utf-8", "not found; the metrics are at /metrics\n"};
}

// A verdict rests on 6 rounds with the job on its GPUs: 30 s at the default 5 s interval.
fleet::LedgerOptions ledger_options(const ExportRequest& req) {
  fleet::LedgerOptions o;
  o.retention_s = req.job_retention_s;
  o.min_samples = 6;
  o.min_seconds = 5 * req.interval_s;
  return o;
}

// SIGTERM, SIGINT and SIGHUP wait for the server (threads started later
// inherit the mask); a scraper that hangs up is no reason to die.
void block_stop_signals() {
  sys::block_signals({SIGTERM, SIGINT, SIGHUP});
  signal(SIGPIPE, SIG_IGN);
}

// "listening on http://127.0.0.1:9400/metrics (...)", or for ":9400" the
// addresses it covers and the URL that reaches it from this machine.
// ...; and, where some GPU cannot have the DCGM_FI_PROF_* fields, which and why.
void log_listening(const MessageSink& log, const ListenAddress& bound, const Readings& first, double interval_s,
                   const HttpSecurity& security) {
  std::size_t devices = first.devices.size();
  std::optional<std::string> gap = profiling_gap(profiling_sources(first));
  std::string port = std::to_string(bound.port);
  std::string scheme = security.tls ? "https://" : "http://";
  std::string where = bound.any ? ":" + port + ", every IPv4" + (bound.ipv6 ? " and IPv6" : "") + " address (" +
                                      scheme + "127.0.0.1:" + port + "/metrics from this machine)"
                                : scheme + format_listen_address(bound) + "/metrics";
  if (security.auth && security.auth->enabled()) where += ", basic auth";
  char detail[96];
  std::snprintf(detail, sizeof detail, "%zu GPU and MIG devices, NVML read every %g s", devices, interval_s);
  log(Severity::kInfo, "listening", "export: listening on " + where + " (" + detail + ")" + (gap ? "; " + *gap : ""),
      {{"address", format_listen_address(bound)},
       {"not_served", gap ? nlohmann::ordered_json(*gap) : nlohmann::ordered_json()},
       {"all_addresses", bound.any},
       {"port", bound.port},
       {"devices", devices},
       {"interval_s", interval_s}});
}

// What the pod watcher's rounds say, each kind of line rate-limited.
class PodWatchLog {
 public:
  PodWatchLog(std::string socket, MessageSink log) : socket_(std::move(socket)), log_(std::move(log)) {}
  void round(const PodListRound& r, bool changed);

 private:
  void found(const PodListRound& r);
  void failed(const PodListRound& r);
  void refused(const PodListRound& r);

  std::string socket_;
  MessageSink log_;
  std::string last_error_;
  RateLimitedLog found_{kPodLogEvery, "pod_resources", log_}, refused_{kPodLogEvery, "pod_resources", log_};
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
  RateLimitedLog& log = failed_.try_emplace(r.kind, kPodLogEvery, "pod_resources", log_).first->second;
  log.log("export: no pod labels: " + r.error + "; retrying every interval", Severity::kWarning,
          {{"socket", socket_}, {"error", r.error}});
}

void PodWatchLog::refused(const PodListRound& r) {
  refused_.log("export: " + std::to_string(r.refused) + " GPU and MIG devices left without pod labels: " +
                   r.refusal + " (the kubelet at " + socket_ + ")",
               Severity::kWarning, {{"socket", socket_}, {"refused", r.refused}, {"reason", r.refusal}});
}

// Serves until SIGTERM or SIGINT; the pods and readings stop before it returns.
int serve(const ExportRequest& req, const ExportEnv& env, int fd, const ListenAddress& bound,
          MetricsRenderer* metrics, const HttpSecurity& security) {
  std::shared_ptr<const Readings> first = env.gpus->latest();
  RateLimitedLog hangups(std::chrono::seconds(10), "http", env.log);
  auto hangup = [&] {
    hangups.log("export: SIGHUP ignored: the exporter reads NVML live and keeps serving; restart it to decide "
                "gpuenv_plan_info again",
                Severity::kInfo);
  };
  std::string err;
  bool ok = serve_http(
      fd, [&](const std::string& path) { return respond(path, env, *metrics); },
      [&] { log_listening(env.log, bound, *first, req.interval_s, security); }, hangup, &err, security);
  metrics->stop();
  env.pods->stop();
  env.gpus->stop();
  return ok ? kExitOk : fail(env, err, kExitFailure);
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

}  // namespace

int run_export(const ExportRequest& req, const ExportEnv& env) {
  ListenAddress address, bound;
  std::string err;
  if (!parse_listen_address(req.listen, &address, &err)) return fail(env, err, kExitUsage);
  WebSecurity security;
  if (!web_security(req, env, &security)) return kExitBadInput;
  block_stop_signals();
  int fd = listen_tcp(address, &bound, &err);
  if (fd < 0)
    return fail(env, "cannot listen: " + err + "; stop what holds the port or pick another with --listen",
                kExitFailure);
  ExporterInfo info;
  if (!exporter_info(req, env, &info) || !counters(req, env, &info)) return close(fd), kExitBadInput;
  Problem p;
  auto interval = std::chrono::milliseconds(std::lround(req.interval_s * 1000));
  if (!env.gpus->start(interval, &p))
    return close(fd), fail(env, p.message + (p.fix.empty() ? "" : "; " + p.fix), kExitFailure);
  PodWatchLog pod_log(req.pod_resources_socket, env.log);  // outlives the pods' rounds: serve stops them
  // The jobs wait for the kubelet's first answer (or failure): before it, a
  // pod's processes would be taken by their cgroup as a second job.
  std::atomic<bool> pods_asked{req.pod_resources_socket.empty()};
  if (!req.pod_resources_socket.empty())
    env.pods->start(req.pod_resources_socket, interval, [&pod_log, &pods_asked](const PodListRound& r, bool changed) {
      pod_log.round(r, changed);
      pods_asked = true;
    });
  std::optional<JobTracker> jobs;
  if (env.processes && wants(req.metrics, "jobs")) jobs.emplace(env.processes, ledger_options(req), env.unix_clock, env.log);
  MetricsRenderer metrics(env, info, jobs ? &*jobs : nullptr, &pods_asked);  // outlives serve, which stops it
  metrics.start(interval);
  return serve(req, env, fd, bound, &metrics, security.http);
}

bool NvmlReadings::start(std::chrono::milliseconds interval, Problem* err) {
  return sampler_.start(library_, interval, err, dcgm_library_);
}

void KubeletPods::start(const std::string& socket, std::chrono::milliseconds interval,
                        PodResourcesWatcher::OnRound on_round) {
  route_library_logs();
  watcher_.start(socket, interval, kKubeletDeadline, std::move(on_round), helper_env_);
}

}  // namespace gpuenv::flow
