// The export sequence end to end with fakes: fake readings, pods, machine,
// clock and host name; the real HTTP server on 127.0.0.1:0, scraped over a
// socket; stopped with SIGTERM to its thread, as a signal stops the command.
#include "flow/export.h"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <atomic>
#include <optional>
#include <thread>

#include "act/render/prometheus_text.h"
#include "act/serve/http_server.h"
#include "builders.h"
#include "decide/decide.h"
#include "model/exit_codes.h"
#include "said.h"
#include "wait_until.h"

namespace gpuenv::flow {
namespace {

namespace machine = gpuenv::testing::machine;
using gpuenv::testing::Said;
using gpuenv::testing::wait_until;

DeviceReading h200(int index, const char* pci) {
  DeviceReading d;
  d.gpu = index;
  d.uuid = "GPU-" + std::to_string(index);
  d.name = "NVIDIA H200";
  d.pci_bus_id = pci;
  d.up = true;
  d.health.temperature_c = 60 + index;
  return d;
}

// One round of two H200s, read at 100 s on the steady clock.
std::shared_ptr<const Readings> two_h200s() {
  auto r = std::make_shared<Readings>();
  r->devices = {h200(0, "00000000:19:00.0"), h200(1, "00000000:2A:00.0")};
  r->sampled_at = 100;
  r->driver_version = "580.95.05";
  return r;
}

class FakeGpus : public GpuReadings {
 public:
  bool start(std::chrono::milliseconds interval, Problem* err) override {
    interval_ = interval;
    if (refusal) *err = *refusal;
    return !refusal;
  }
  std::shared_ptr<const Readings> latest() const override {
    auto r = std::make_shared<Readings>(*two_h200s());
    r->sampled_at = at;
    if (with_process) r->devices[0].processes = std::vector<GpuProcess>{{4242, 1 << 30, std::nullopt}};
    return r;
  }
  void stop() override { stopped = true; }

  std::atomic<double> at{100};        // the round's time
  std::atomic<bool> with_process{false};  // PID 4242 on GPU 0
  std::optional<Problem> refusal;  // start fails with it
  std::atomic<std::chrono::milliseconds> interval_{std::chrono::milliseconds(0)};
  std::atomic<bool> stopped{false};
};

// GPU-1 is the pytorch container's of pod trainer-0 in namespace ml; each
// start reports `round` once.
class FakePods : public PodAssignments {
 public:
  void start(const std::string& socket, std::chrono::milliseconds, PodResourcesWatcher::OnRound on_round) override {
    started_on = socket;
    saved_ = on_round;
    if (answers) on_round(round, true);
  }
  /// The kubelet's answer, late (answers = false).
  void answer() { saved_(round, true); }
  bool answers = true;
  std::shared_ptr<const PodDevices> latest() const override {
    auto p = std::make_shared<PodDevices>();
    p->add("nvidia.com/gpu", "GPU-1", {"trainer-0", "ml", "pytorch"});
    return p;
  }
  void stop() override { stopped = true; }

  PodListRound round{PodListStatus::kOk, 0, "", 1, 0, ""};
  PodResourcesWatcher::OnRound saved_;
  std::string started_on;  // the socket; "" until started
  std::atomic<bool> stopped{false};
};

// The fakes and an environment made of them: machine::h200(2), a clock at
// 102.5 s, the node "node-7".
// A host whose /proc has no process NVML lists (the jobs are "unknown").
class NoProcesses : public ProcessSource {
 public:
  std::vector<ProcessFacts> facts(const std::vector<std::uint32_t>& pids) override {
    std::vector<ProcessFacts> out(pids.size());
    for (std::size_t i = 0; i < pids.size(); ++i) out[i].pid = pids[i];
    return out;
  }
  JobCpuReading cpu(const JobOwner&) override { return {}; }
  bool hpc_jobs(HpcJobMap* out, std::string*) override { return out->clear(), true; }
};

struct ExportFakes {
  FakeGpus gpus;
  FakePods pods;
  NoProcesses processes;
  Said said;
  bool sensed = true;
  ExportEnv env() {
    ExportEnv e;
    e.gpus = &gpus;
    e.pods = &pods;
    e.processes = &processes;
    e.sense = [this](Machine* m, Options*) {
      *m = machine::h200(2);
      return sensed;
    };
    e.clock = [] { return 102.5; };
    e.hostname = [] { return std::string("node-7"); };
    e.log = said.sink();
    return e;
  }
};

ExportRequest on_any_port() {
  ExportRequest r;
  r.listen = "127.0.0.1:0";
  r.interval_s = 0.25;
  r.pod_resources_socket = "/run/fake-kubelet.sock";
  return r;
}

// run_export on a thread of its own (its signal mask is that thread's),
// stopped by a signal to that thread once it serves.
class Running {
 public:
  Running(const ExportRequest& request, ExportFakes* fakes)
      : fakes_(fakes), thread_([this, request, env = fakes->env()] {
          status_ = run_export(request, env);
          done_ = true;
        }) {}
  ~Running() {  // a test that ended early: a signal only once it is handled
    if (!thread_.joinable()) return;
    if (wait_until([&] { return done_ || port() > 0; }) && !done_) signal(SIGTERM);
    thread_.join();
  }
  /// The port it listens on, once it says so; 0 until then.
  int port() const {
    std::optional<Said::Line> l = fakes_->said.find("listening");
    return l ? l->fields["port"].get<int>() : 0;
  }
  void signal(int sig) { pthread_kill(thread_.native_handle(), sig); }
  /// Its exit status once it has ended.
  int wait() {
    thread_.join();
    return status_;
  }

 private:
  ExportFakes* fakes_;
  std::atomic<int> status_{-1};
  std::atomic<bool> done_{false};
  std::thread thread_;  // last: it starts once the rest is there
};

int run_to_end(const ExportRequest& request, ExportFakes* fakes) {
  int status = -1;
  std::thread([&] { status = run_export(request, fakes->env()); }).join();
  return status;
}

struct Reply {
  int status = 0;
  std::string head, body;
};

// GET `path` from 127.0.0.1:port over HTTP/1.0 (the server closes when done).
Reply get(int port, const std::string& path) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(static_cast<std::uint16_t>(port));
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  timeval tv{10, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  std::string request = "GET " + path + " HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n", got;
  if (connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) == 0 &&
      send(fd, request.data(), request.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(request.size())) {
    char buf[65536];
    for (ssize_t n; (n = recv(fd, buf, sizeof buf, 0)) > 0;) got.append(buf, static_cast<std::size_t>(n));
  }
  close(fd);
  Reply r;
  std::size_t split = got.find("\r\n\r\n");
  if (split == std::string::npos) return r;
  r.head = got.substr(0, split);
  r.body = got.substr(split + 4);
  r.status = std::atoi(r.head.c_str() + r.head.find(' ') + 1);
  return r;
}

bool has_line(const std::string& text, const std::string& line) {
  return ("\n" + text).find("\n" + line + "\n") != std::string::npos;
}

TEST(ExportFlow, ServesTheReadingsAndEndsOnSigterm) {
  ExportFakes fakes;
  Running exporter(on_any_port(), &fakes);
  ASSERT_TRUE(wait_until([&] { return exporter.port() > 0; })) << "never said it listens";
  EXPECT_EQ(fakes.gpus.interval_.load(), std::chrono::milliseconds(250));
  EXPECT_EQ(fakes.pods.started_on, "/run/fake-kubelet.sock");

  Reply metrics = get(exporter.port(), "/metrics");
  ASSERT_EQ(metrics.status, 200) << metrics.head;
  EXPECT_NE(metrics.head.find(std::string("Content-Type: ") + prometheus::kContentType), std::string::npos);
  const std::string& b = metrics.body;
  EXPECT_TRUE(has_line(b, "gpuenv_gpu_temperature_celsius{gpu=\"0\",uuid=\"GPU-0\",name=\"NVIDIA H200\","
                          "pci_bus_id=\"00000000:19:00.0\"} 60")) << b;
  EXPECT_TRUE(has_line(b, "gpuenv_gpu_temperature_celsius{gpu=\"1\",uuid=\"GPU-1\",name=\"NVIDIA H200\","
                          "pci_bus_id=\"00000000:2A:00.0\",pod=\"trainer-0\",namespace=\"ml\","
                          "container=\"pytorch\"} 61")) << b;
  EXPECT_TRUE(has_line(b, "DCGM_FI_DEV_GPU_TEMP{gpu=\"0\",UUID=\"GPU-0\",pci_bus_id=\"00000000:19:00.0\","
                          "modelName=\"NVIDIA H200\",hostname=\"node-7\",DCGM_FI_DRIVER_VERSION=\"580.95.05\"} 60"))
      << b;
  EXPECT_TRUE(has_line(b, "gpuenv_exporter_scrape_age_seconds 2.5")) << b;  // the clock's 102.5 - 100
  EXPECT_TRUE(has_line(b, std::string("gpuenv_build_info{version=\"") + GPUENV_VERSION + "\"} 1")) << b;
  Plan plan = decide(machine::h200(2), Options());
  ASSERT_FALSE(plan.settings.empty());
  for (const Setting& s : plan.settings)
    EXPECT_NE(b.find("gpuenv_plan_info{setting=\"" + s.name + "\","), std::string::npos) << s.name;
  EXPECT_TRUE(has_line(b, "gpuenv_plan_info{setting=\"CUDA_DEVICE_ORDER\",value=\"PCI_BUS_ID\"} 1")) << b;

  Reply index = get(exporter.port(), "/");
  EXPECT_EQ(index.status, 200);
  EXPECT_NE(index.body.find("<a href=\"/metrics\">"), std::string::npos) << index.body;
  Reply health = get(exporter.port(), "/health");  // dcgm-exporter's answer
  EXPECT_EQ(health.status, 200);
  EXPECT_EQ(health.body, "KO");
  Reply missing = get(exporter.port(), "/healthz");
  EXPECT_EQ(missing.status, 404);
  EXPECT_EQ(missing.body, "not found; the metrics are at /metrics\n");

  exporter.signal(SIGTERM);
  EXPECT_EQ(exporter.wait(), kExitOk);
  EXPECT_TRUE(fakes.gpus.stopped);
  EXPECT_TRUE(fakes.pods.stopped);
  std::optional<Said::Line> listening = fakes.said.find("listening");
  EXPECT_EQ(listening->text, "export: listening on http://127.0.0.1:" + std::to_string(exporter.port()) +
                                 "/metrics (2 GPU and MIG devices, NVML read every 0.25 s)");
  EXPECT_EQ(fakes.said.find("pod_resources")->text,
            "export: pod labels from the kubelet at /run/fake-kubelet.sock (1 GPU and MIG devices assigned)");
  EXPECT_FALSE(fakes.said.find("error"));
}

// The jobs wait for the kubelet's first answer: before it, a pod's
// processes would be taken by their cgroup as a second job.
TEST(ExportFlow, TheJobsWaitForTheKubeletsFirstAnswer) {
  ExportFakes fakes;
  fakes.gpus.with_process = true;
  fakes.pods.answers = false;
  Running running(on_any_port(), &fakes);
  ASSERT_TRUE(wait_until([&] { return running.port() > 0; }));
  Reply before = get(running.port(), "/metrics");
  EXPECT_NE(before.body.find("gpuenv_gpu_temperature_celsius"), std::string::npos) << before.body;
  EXPECT_EQ(before.body.find("gpuenv_job_"), std::string::npos) << "no job before the kubelet answers";
  fakes.pods.answer();
  fakes.gpus.at = 105;
  EXPECT_TRUE(wait_until([&] {
    return get(running.port(), "/metrics").body.find("gpuenv_job_processes{job=\"unknown\"") != std::string::npos;
  }));
  running.signal(SIGTERM);
  EXPECT_EQ(running.wait(), kExitOk);
}

TEST(ExportFlow, SighupIsSaidAndServingGoesOn) {
  ExportFakes fakes;
  Running exporter(on_any_port(), &fakes);
  ASSERT_TRUE(wait_until([&] { return exporter.port() > 0; }));
  exporter.signal(SIGHUP);
  ASSERT_TRUE(wait_until([&] { return fakes.said.find("http").has_value(); }));
  EXPECT_EQ(fakes.said.find("http")->level, Severity::kInfo);
  EXPECT_NE(fakes.said.find("http")->text.find("SIGHUP ignored"), std::string::npos);
  EXPECT_EQ(get(exporter.port(), "/metrics").status, 200);
  exporter.signal(SIGINT);
  EXPECT_EQ(exporter.wait(), kExitOk);
}

TEST(ExportFlow, ServesTheNameSetsAskedAndNoPodsWithoutASocket) {
  ExportFakes fakes;
  ExportRequest r = on_any_port();
  r.metrics = {"dcgm"};
  r.pod_resources_socket = "";
  Running exporter(r, &fakes);
  ASSERT_TRUE(wait_until([&] { return exporter.port() > 0; }));
  std::string b = get(exporter.port(), "/metrics").body;
  EXPECT_NE(b.find("\nDCGM_FI_DEV_GPU_TEMP{"), std::string::npos) << b;
  EXPECT_EQ(b.find("gpuenv_gpu_"), std::string::npos) << b;
  EXPECT_EQ(fakes.pods.started_on, "");
  exporter.signal(SIGTERM);
  EXPECT_EQ(exporter.wait(), kExitOk);
}

TEST(ExportFlow, AFailingPodListIsAWarning) {
  ExportFakes fakes;
  fakes.pods.round = {PodListStatus::kFailed, 14, "connection refused", 0, 0, ""};
  Running exporter(on_any_port(), &fakes);
  ASSERT_TRUE(wait_until([&] { return exporter.port() > 0; }));
  std::optional<Said::Line> l = fakes.said.find("pod_resources");
  ASSERT_TRUE(l);
  EXPECT_EQ(l->level, Severity::kWarning);
  EXPECT_EQ(l->text, "export: no pod labels: connection refused; retrying every interval");
  EXPECT_EQ(l->fields["socket"], "/run/fake-kubelet.sock");
}

// Each way the sequence ends before it serves: its exit status and line.
TEST(ExportFlow, EndsBeforeServingWithTheDocumentedStatus) {
  ListenAddress any{"127.0.0.1", 0, false}, taken;
  std::string err;
  int holder = listen_tcp(any, &taken, &err);
  ASSERT_GE(holder, 0) << err;
  struct Row {
    const char* what;
    std::string listen;
    bool sensed;
    bool nvml_fails;
    int status;
    std::string said;  // the error line; "" for none of the sequence's own
  } rows[] = {
      {"a bad address", "gpu-node:9400", true, false, kExitUsage, "export: "},
      {"a taken port", format_listen_address(taken), true, false, kExitFailure, "export: cannot listen: bind("},
      {"no machine", "127.0.0.1:0", false, false, kExitBadInput, ""},
      {"no NVML", "127.0.0.1:0", true, true, kExitFailure, "export: libnvidia-ml.so.1 not found; install the driver"},
  };
  for (const Row& row : rows) {
    ExportFakes fakes;
    fakes.sensed = row.sensed;
    if (row.nvml_fails) fakes.gpus.refusal = Problem{"nvml", "x", "libnvidia-ml.so.1 not found", "install the driver"};
    ExportRequest r = on_any_port();
    r.listen = row.listen;
    EXPECT_EQ(run_to_end(r, &fakes), row.status) << row.what;
    std::optional<Said::Line> error = fakes.said.find("error");
    if (row.said.empty()) {
      EXPECT_FALSE(error) << row.what;
    } else {
      ASSERT_TRUE(error) << row.what;
      EXPECT_EQ(error->text.rfind(row.said, 0), 0u) << row.what << ": " << error->text;
    }
    EXPECT_EQ(fakes.pods.started_on, "") << row.what;
    EXPECT_FALSE(fakes.said.find("listening")) << row.what;
  }
  close(holder);
}

}  // namespace
}  // namespace gpuenv::flow
