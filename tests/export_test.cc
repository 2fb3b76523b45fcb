// gpuenv export end to end against the stand-in NVML: scraped with curl,
// checked by promtool, and scraped by a real Prometheus server.
#include <gtest/gtest.h>
#include <signal.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "container_support.h"
#include "process.h"

namespace gpuenv::testing {
namespace {

constexpr const char* kListening = "listening on http://127.0.0.1:";

// A running `gpuenv export` on a port the kernel picked.
class Exporter {
 public:
  explicit Exporter(const std::string& scenario, std::vector<std::string> extra = {})
      : bg_(argv(extra), stand_in_env(scenario)) {
    ready_ = bg_.wait_for_log(kListening, 15000);
    std::string log = bg_.log();
    std::size_t at = log.find(kListening);
    if (ready_) port_ = std::atoi(log.c_str() + at + std::string(kListening).size());
  }
  bool ready() const { return ready_ && port_ > 0; }
  int port() const { return port_; }
  Background& process() { return bg_; }
  std::string url(const std::string& path) const {
    return "http://127.0.0.1:" + std::to_string(port_) + path;
  }

 private:
  static std::vector<std::string> argv(const std::vector<std::string>& extra) {
    std::vector<std::string> a = {GPUENV_BIN, "export", "--listen", "127.0.0.1:0", "--interval", "0.2"};
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
  }
  Background bg_;
  bool ready_ = false;
  int port_ = 0;
};

struct Http {
  int status = 0;
  std::string headers, body;
};

Http curl(const std::string& url) {
  ProcessResult r = run_process({"curl", "-sS", "-D", "-", url}, {{}, "", 10000});
  Http h;
  std::size_t split = r.out.find("\r\n\r\n");
  if (r.exit_code != 0 || split == std::string::npos) return h;
  h.headers = r.out.substr(0, split);
  h.body = r.out.substr(split + 4);
  h.status = std::atoi(h.headers.c_str() + h.headers.find(' ') + 1);
  return h;
}

// Sends `request` on a new connection to 127.0.0.1:port and returns all
// it reads until the server closes it or `timeout_ms` passes.
std::string exchange(int port, const std::string& request, int timeout_ms = 5000) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(static_cast<std::uint16_t>(port));
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  timeval tv{timeout_ms / 1000, (timeout_ms % 1000) * 1000};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  std::string got;
  if (connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) == 0 &&
      send(fd, request.data(), request.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(request.size())) {
    char buf[65536];
    for (ssize_t n; (n = recv(fd, buf, sizeof buf, 0)) > 0;) got.append(buf, static_cast<std::size_t>(n));
  }
  close(fd);
  return got;
}

std::vector<std::string> lines_starting(const std::string& text, const std::string& prefix) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (line.rfind(prefix, 0) == 0) out.push_back(line);
  return out;
}

bool has_line(const std::string& text, const std::string& line) {
  return ("\n" + text).find("\n" + line + "\n") != std::string::npos;
}

const std::string kGpu6 =
    "gpu=\"6\",uuid=\"GPU-6c1f0c3e-8a52-4b0e-9d3a-2f1e7b9c4d16\",name=\"NVIDIA H200\",pci_bus_id=\"00000000:CB:00.0\"";

TEST(Export, ServesTheScenariosValuesForEightGpus) {
  Exporter e("h200_8_busy");
  ASSERT_TRUE(e.ready()) << e.process().log();
  Http h = curl(e.url("/metrics"));
  ASSERT_EQ(h.status, 200) << h.headers;
  EXPECT_NE(h.headers.find("Content-Type: text/plain; version=0.0.4"), std::string::npos) << h.headers;
  EXPECT_EQ(lines_starting(h.body, "gpuenv_gpu_up{").size(), 8u) << h.body;
  EXPECT_EQ(lines_starting(h.body, "gpuenv_gpu_clock_event_active{").size(), 8u * 9);
  for (const char* want : {"gpuenv_gpu_up{%} 1", "gpuenv_gpu_utilization_ratio{%} 0.65",
                           "gpuenv_gpu_memory_utilization_ratio{%} 0.3",
                           "gpuenv_gpu_memory_used_bytes{%} 64428703744", "gpuenv_gpu_memory_free_bytes{%} 85716893696",
                           "gpuenv_gpu_memory_total_bytes{%} 150754820096", "gpuenv_gpu_temperature_celsius{%} 46",
                           "gpuenv_gpu_power_watts{%} 550.75", "gpuenv_gpu_energy_joules_total{%} 7000.25",
                           "gpuenv_gpu_sm_clock_hertz{%} 1890000000", "gpuenv_gpu_memory_clock_hertz{%} 3201000000",
                           "gpuenv_gpu_clock_event_active{%,reason=\"gpu_idle\"} 0",
                           "gpuenv_gpu_pcie_link_generation{%} 5", "gpuenv_gpu_pcie_link_width{%} 16",
                           "gpuenv_gpu_pcie_replay_errors_total{%} 12",
                           "gpuenv_gpu_ecc_errors_total{%,type=\"corrected\"} 18",
                           "gpuenv_gpu_ecc_errors_total{%,type=\"uncorrected\"} 2",
                           "gpuenv_gpu_row_remap_total{%,type=\"correctable\"} 0",
                           "gpuenv_gpu_row_remap_total{%,type=\"uncorrectable\"} 1",
                           "gpuenv_gpu_row_remap_pending{%} 1", "gpuenv_gpu_nvlink_links_up{%} 18"}) {
    std::string line = want;
    line.replace(line.find('%'), 1, kGpu6);
    EXPECT_TRUE(has_line(h.body, line)) << line;
  }
  EXPECT_EQ(lines_starting(h.body, "gpuenv_gpu_clock_event_active{gpu=\"5\"").size(), 9u);
  EXPECT_EQ(lines_starting(h.body, "gpuenv_build_info{version=\"").size(), 1u);
  EXPECT_FALSE(lines_starting(h.body, "gpuenv_plan_info{setting=\"").empty()) << h.body;
  EXPECT_TRUE(has_line(h.body, "gpuenv_exporter_nvml_errors_total 0"));
  EXPECT_EQ(lines_starting(h.body, "gpuenv_exporter_scrape_age_seconds ").size(), 1u);

  ProcessResult check = run_process({"promtool", "check", "metrics"}, {{}, h.body, 10000});
  EXPECT_EQ(check.exit_code, 0) << "promtool (Debian's prometheus package; `make deps`): " << check.out
                                << check.err;
}

TEST(Export, ALostGpuIsZeroWhileTheOthersAreServed) {
  Exporter e("gpu_lost");
  ASSERT_TRUE(e.ready()) << e.process().log();
  std::string body = curl(e.url("/metrics")).body;
  EXPECT_EQ(lines_starting(body, "gpuenv_gpu_up{").size(), 3u) << body;
  EXPECT_TRUE(has_line(body, "gpuenv_gpu_up{gpu=\"1\",name=\"NVIDIA L4\"} 0")) << body;
  EXPECT_TRUE(has_line(body,
                       "gpuenv_gpu_memory_total_bytes{gpu=\"2\",uuid=\"GPU-14000002-0000-4000-8000-000000000002\","
                       "name=\"NVIDIA L4\",pci_bus_id=\"00000000:03:00.0\"} 24152899584"))
      << body;
  EXPECT_TRUE(lines_starting(body, "gpuenv_gpu_memory_total_bytes{gpu=\"1\"").empty());
  EXPECT_TRUE(lines_starting(body, "gpuenv_exporter_nvml_errors_total 0").empty());  // counted
}

TEST(Export, MigDevicesHaveTheirOwnSeries) {
  Exporter e("a100_mig");
  ASSERT_TRUE(e.ready()) << e.process().log();
  std::string body = curl(e.url("/metrics")).body;
  EXPECT_EQ(lines_starting(body, "gpuenv_gpu_up{gpu=\"0\",mig=\"").size(), 3u) << body;
  EXPECT_TRUE(has_line(body,
                       "gpuenv_gpu_memory_total_bytes{gpu=\"0\",mig=\"1\",uuid=\"MIG-5f2e0c1a-0d4b-5a8e-9c3f-"
                       "000000000004\",name=\"NVIDIA A100-SXM4-80GB MIG 2g.20gb\",pci_bus_id=\"00000000:07:00.0\"} "
                       "20937965568"))
      << body;
  EXPECT_EQ(run_process({"promtool", "check", "metrics"}, {{}, body, 10000}).exit_code, 0);
}

TEST(Export, PointerPageAndNotFound) {
  Exporter e("h200");
  ASSERT_TRUE(e.ready()) << e.process().log();
  Http root = curl(e.url("/"));
  EXPECT_EQ(root.status, 200);
  EXPECT_NE(root.body.find("href=\"/metrics\""), std::string::npos) << root.body;
  EXPECT_EQ(curl(e.url("/nope")).status, 404);
  EXPECT_EQ(curl(e.url("/metrics?x=1")).status, 200);
}

TEST(Export, HeadGivesTheLengthAndNoBody) {
  Exporter e("h200");
  ASSERT_TRUE(e.ready()) << e.process().log();
  // HEAD, then GET on the same connection: a body after the HEAD's head
  // would be read as the next response.
  std::string got = exchange(e.port(),
                             "HEAD /metrics HTTP/1.1\r\nHost: x\r\n\r\n"
                             "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  std::size_t head_end = got.find("\r\n\r\n");
  ASSERT_NE(head_end, std::string::npos) << got;
  std::string head = got.substr(0, head_end);
  EXPECT_EQ(head.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << head;
  std::size_t at = head.find("Content-Length: ");
  ASSERT_NE(at, std::string::npos) << head;
  long length = std::atol(head.c_str() + at + 16);
  EXPECT_GT(length, 1000) << head;
  std::string rest = got.substr(head_end + 4);
  EXPECT_EQ(rest.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << "after the HEAD's head: " << rest.substr(0, 200);
  std::size_t body = rest.find("\r\n\r\n");
  ASSERT_NE(body, std::string::npos);
  EXPECT_NE(rest.find("gpuenv_gpu_up{", body), std::string::npos);
  // The lengths agree but for the few bytes of the scrape age.
  EXPECT_LT(std::labs(static_cast<long>(rest.size() - body - 4) - length), 16L);
}

// evhttp's timeout restarts at every byte; the request as a whole has 10 s.
TEST(Export, ATricklingRequestIsClosedAfterTenSeconds) {
  Exporter e("h200");
  ASSERT_TRUE(e.ready()) << e.process().log();
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(static_cast<std::uint16_t>(e.port()));
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa), 0);
  timeval tv{0, 500 * 1000};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  auto start = std::chrono::steady_clock::now();
  const std::string head = "GET /metrics HTTP/1.1\r\nHost: x\r\nX-Slow: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
  bool closed = false;
  for (std::size_t i = 0; i < head.size() && !closed && std::chrono::steady_clock::now() - start < std::chrono::seconds(14);
       ++i) {
    send(fd, &head[i], 1, MSG_NOSIGNAL);
    char c;
    for (int waits = 0; waits < 4 && !closed; ++waits) closed = recv(fd, &c, 1, 0) == 0;  // a byte every 2 s
  }
  double lived = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  close(fd);
  EXPECT_TRUE(closed) << "still open after " << lived << " s";
  EXPECT_GT(lived, 9.0);
  EXPECT_LT(lived, 12.0);
}

TEST(Export, SigtermEndsItWithZeroWithinASecond) {
  for (int sig : {SIGTERM, SIGINT}) {
    Exporter e("h200_8_busy");
    ASSERT_TRUE(e.ready()) << e.process().log();
    auto start = std::chrono::steady_clock::now();
    kill(e.process().pid(), sig);
    int code = -1;
    ASSERT_TRUE(e.process().wait_exit(1000, &code)) << "still running a second after signal " << sig;
    EXPECT_EQ(code, 0) << e.process().log();
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1));
  }
}

TEST(Export, ListensOnEveryAddressOrLocalhostAsGoExportersDo) {
  for (const char* listen : {":0", "localhost:0"}) {
    Background bg({GPUENV_BIN, "export", "--listen", listen}, stand_in_env("h200"));
    const std::string said = std::string(listen) == ":0" ? "listening on :" : "listening on http://127.0.0.1:";
    ASSERT_TRUE(bg.wait_for_log(said, 15000)) << listen << ": " << bg.log();
    std::string log = bg.log();
    int port = std::atoi(log.c_str() + log.find(said) + said.size());
    if (std::string(listen) == ":0") {
      EXPECT_NE(log.find(", every IPv4"), std::string::npos) << log;
    }
    EXPECT_EQ(curl("http://127.0.0.1:" + std::to_string(port) + "/metrics").status, 200) << listen << ": " << log;
  }
}

TEST(Export, TheStartUpLineFollowsLogFormatJson) {
  Exporter e("h200", {"--log-format", "json"});
  ASSERT_TRUE(e.ready()) << e.process().log();
  std::string log = e.process().log();
  std::size_t at = log.rfind('\n', log.find("listening on"));
  std::string first = log.substr(at == std::string::npos ? 0 : at + 1);
  first = first.substr(0, first.find('\n'));
  nlohmann::json j = nlohmann::json::parse(first, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << log;
  EXPECT_EQ(j.value("level", ""), "info") << first;
  EXPECT_EQ(j.value("msg", ""), "listening") << first;
  EXPECT_GT(j.value("port", 0), 0) << first;
  EXPECT_EQ(j.value("devices", 0), 1) << first;
}

TEST(Export, SighupIsLoggedAndServingGoesOn) {
  Exporter e("h200");
  ASSERT_TRUE(e.ready()) << e.process().log();
  kill(e.process().pid(), SIGHUP);
  ASSERT_TRUE(e.process().wait_for_log("SIGHUP ignored", 3000)) << e.process().log();
  EXPECT_EQ(curl(e.url("/metrics")).status, 200) << e.process().log();
  int code = -1;
  EXPECT_FALSE(e.process().wait_exit(200, &code)) << "SIGHUP ended it: " << code;
}

TEST(Export, BadFlagsExitTwoNamingThem) {
  ProcessResult bad = run_gpuenv({"export", "--listen", "gpu-node:9400"}, stand_ins("h200"));
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("\"gpu-node:9400\""), std::string::npos) << bad.err;
  ProcessResult port = run_gpuenv({"export", "--listen", "127.0.0.1:70000"}, stand_ins("h200"));
  EXPECT_EQ(port.exit_code, 2);
  EXPECT_NE(port.err.find("0-65535"), std::string::npos) << port.err;
  ProcessResult machine = run_gpuenv({"export", "--machine", "x.json"}, stand_ins("h200"));
  EXPECT_EQ(machine.exit_code, 2);
  EXPECT_NE(machine.err.find("--machine"), std::string::npos) << machine.err;
  EXPECT_EQ(run_gpuenv({"export", "--interval", "0"}, stand_ins("h200")).exit_code, 2);
}

TEST(Export, ANonFiniteIntervalExitsTwo) {
  for (const char* bad : {"nan", "NaN", "inf", "-inf", "infinity", "1e999"}) {
    ProcessOptions opts = stand_ins("h200");
    opts.timeout_ms = 3000;  // before the fix it served, reading NVML in a tight loop
    ProcessResult r = run_gpuenv({"export", "--listen", "127.0.0.1:0", "--interval", bad}, opts);
    EXPECT_EQ(r.exit_code, 2) << bad << ": " << r.err;
    EXPECT_NE(r.err.find("--interval"), std::string::npos) << r.err;
  }
}

TEST(Export, APortInUseOrNoNvmlExitsOne) {
  Exporter first("h200");
  ASSERT_TRUE(first.ready()) << first.process().log();
  std::string taken = "127.0.0.1:" + std::to_string(first.port());
  ProcessResult r = run_gpuenv({"export", "--listen", taken}, stand_ins("h200"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("bind(" + taken + "): Address already in use"), std::string::npos) << r.err;
  ProcessResult none = run_gpuenv({"export", "--listen", "127.0.0.1:0"});  // no NVML at all
  EXPECT_EQ(none.exit_code, 1);
  EXPECT_NE(none.err.find("cannot load NVML"), std::string::npos) << none.err;
}

// How many series `query` returns from Prometheus' HTTP API, or -1.
int series_count(int port, const std::string& query) {
  Http h = curl("http://127.0.0.1:" + std::to_string(port) + "/api/v1/query?query=" + query);
  nlohmann::json j = nlohmann::json::parse(h.body, nullptr, false);
  if (h.status != 200 || j.is_discarded() || j.value("status", "") != "success") return -1;
  return static_cast<int>(j["data"]["result"].size());
}

TEST(Export, ARealPrometheusScrapesIt) {
  ASSERT_EQ(access("/usr/bin/prometheus", X_OK), 0) << "no /usr/bin/prometheus: run `make deps`";
  Exporter e("h200_8_busy");
  ASSERT_TRUE(e.ready()) << e.process().log();
  ScratchDir dir;
  std::string config = dir.file("prometheus.yml",
                                "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
                                "scrape_configs:\n  - job_name: gpuenv\n    static_configs:\n"
                                "      - targets: ['127.0.0.1:" + std::to_string(e.port()) + "']\n");
  int port = free_port();
  Background prom({"/usr/bin/prometheus", "--config.file=" + config, "--storage.tsdb.path=" + dir.path() + "/data",
                   "--web.listen-address=127.0.0.1:" + std::to_string(port), "--log.level=warn"},
                  {});
  int up = -1, busy = -1;
  for (int waited = 0; waited < 20000 && (up != 8 || busy != 1); waited += 250) {
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
    up = series_count(port, "gpuenv_gpu_up");
    busy = series_count(port, "gpuenv_gpu_utilization_ratio%3D%3D0.75");  // GPU 7's
  }
  EXPECT_EQ(up, 8) << prom.log();
  EXPECT_EQ(busy, 1) << prom.log();
  EXPECT_EQ(series_count(port, "up%7Bjob%3D%22gpuenv%22%7D%3D%3D1"), 1);  // the scrape itself succeeded
}

}  // namespace
}  // namespace gpuenv::testing
