// gpuenv export end to end against the stand-in NVML: scraped with curl,
// checked by promtool, and scraped by a real Prometheus server.
#include <gtest/gtest.h>
#include <signal.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <map>
#include <memory>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "container_support.h"
#include "process.h"
#include "wait_until.h"
#include "test_paths.h"
#include "export_process.h"
#include "metric_lines.h"

namespace gpuenv::testing {
namespace {
HttpReply curl(const std::string& url) { return curl_http({url}); }

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


bool has_line(const std::string& text, const std::string& line) {
  return ("\n" + text).find("\n" + line + "\n") != std::string::npos;
}

// promtool check metrics: exit 0, or 3 (lint) where every complaint is one
// dcgm-exporter's own names draw (camelCase labels such as UUID and
// modelName, counters without _total): the format itself is accepted.
::testing::AssertionResult promtool_accepts(const std::string& body) {
  ProcessResult r = run_process({"promtool", "check", "metrics"}, {{}, body, 10000});
  if (r.exit_code == 0) return ::testing::AssertionSuccess();
  if (r.exit_code != 3)
    return ::testing::AssertionFailure() << "promtool (Debian's prometheus package; `make deps`) exit "
                                         << r.exit_code << ": " << r.out << r.err;
  std::istringstream in(r.out + r.err);
  for (std::string line; std::getline(in, line);) {
    bool dcgm_naming = line.rfind("DCGM_FI_", 0) == 0 &&
                       (line.find("label names should be written in 'snake_case'") != std::string::npos ||
                        line.find("counter metrics should have \"_total\" suffix") != std::string::npos ||
                        line.find("metric name should not include type 'counter'") != std::string::npos);
    if (!line.empty() && !dcgm_naming) return ::testing::AssertionFailure() << "promtool: " << line;
  }
  return ::testing::AssertionSuccess();
}

const std::string kGpu6 =
    "gpu=\"6\",uuid=\"GPU-6c1f0c3e-8a52-4b0e-9d3a-2f1e7b9c4d16\",name=\"NVIDIA H200\",pci_bus_id=\"00000000:CB:00.0\"";

TEST(Export, ServesTheScenariosValuesForEightGpus) {
  ExportProcess e("h200_8_busy");
  ASSERT_TRUE(e.ready()) << e.process().log();
  HttpReply h = curl(e.url("/metrics"));
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

  EXPECT_TRUE(promtool_accepts(h.body));
  ExportProcess own("h200_8_busy", {"--metrics", "gpuenv"});
  ASSERT_TRUE(own.ready()) << own.process().log();
  std::string gpuenv_only = curl(own.url("/metrics")).body;
  ProcessResult check = run_process({"promtool", "check", "metrics"}, {{}, gpuenv_only, 10000});
  EXPECT_EQ(check.exit_code, 0) << "gpuenv's own names pass promtool's lint too: " << check.out << check.err;
  EXPECT_EQ(gpuenv_only.find("DCGM_FI_"), std::string::npos);
}

TEST(Export, DcgmNamesOnlyOrABadSetExitsTwo) {
  ExportProcess e("h200_8_busy", {"--metrics=dcgm"}, {{"NODE_NAME", "gpu-node-7"}});  // dcgm-exporter's Hostname
  ASSERT_TRUE(e.ready()) << e.process().log();
  std::string body = curl(e.url("/metrics")).body;
  EXPECT_TRUE(lines_starting(body, "gpuenv_gpu_").empty()) << body;
  EXPECT_TRUE(has_line(body,
                       "DCGM_FI_DEV_FB_USED{gpu=\"6\",UUID=\"GPU-6c1f0c3e-8a52-4b0e-9d3a-2f1e7b9c4d16\","
                       "pci_bus_id=\"00000000:CB:00.0\",device=\"nvidia6\",modelName=\"NVIDIA H200\","
                       "hostname=\"gpu-node-7\",DCGM_FI_DRIVER_VERSION=\"580.95.05\"} 61444"))
      << body;
  std::vector<std::string> xid = lines_starting(body, "DCGM_FI_DEV_XID_ERRORS{gpu=\"4\",");
  ASSERT_EQ(xid.size(), 1u) << body;
  EXPECT_EQ(xid[0].substr(xid[0].rfind(' ') + 1), "79");  // the scenario's Xid 13, then 79
  EXPECT_EQ(lines_starting(body, "gpuenv_exporter_nvml_errors_total").size(), 1u);  // always there
  ProcessResult bad = run_gpuenv({"export", "--metrics", "gpuenv,prom"}, stand_ins("h200"));
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("prom"), std::string::npos) << bad.err;
}

// NVLink: the data counters at once, DCGM's bandwidth from the second round
// (the exporter reads every 0.2 s; the stand-in's GPU 6 moves 512000 KiB each
// way a read, GPU 0 none, the others have no counters).
TEST(Export, NvlinkTrafficUnderBothNamesOnGpusWithCounters) {
  ExportProcess e("h200_8_busy");
  ASSERT_TRUE(e.ready()) << e.process().log();
  std::string body;
  wait_until([&] {
    body = curl(e.url("/metrics")).body;
    return !lines_starting(body, "DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL{gpu=\"6\"").empty();
  }, kEventBound, std::chrono::milliseconds(100));
  std::vector<std::string> busy = lines_starting(body, "DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL{gpu=\"6\"");
  ASSERT_EQ(busy.size(), 1u) << body;
  double mb_per_s = std::stod(busy[0].substr(busy[0].rfind(' ') + 1));
  EXPECT_GT(mb_per_s, 0);
  EXPECT_LE(mb_per_s, 2 * 512000 / 1000 / 0.1) << "rounds are at least 0.1 s apart";
  std::vector<std::string> idle = lines_starting(body, "DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL{gpu=\"0\"");
  ASSERT_EQ(idle.size(), 1u);
  EXPECT_EQ(idle[0].substr(idle[0].rfind(' ') + 1), "0");
  EXPECT_EQ(lines_starting(body, "DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL{").size(), 2u);
  EXPECT_EQ(lines_starting(body, "gpuenv_gpu_nvlink_data_bytes_total{").size(), 4u);  // tx and rx of GPU 0 and 6
  EXPECT_TRUE(has_line(body, "gpuenv_gpu_nvlink_data_bytes_total{gpu=\"0\",uuid=\"GPU-6c1f0c3e-8a52-4b0e-9d3a-2f1e7b9c4d10\","
                             "name=\"NVIDIA H200\",pci_bus_id=\"00000000:19:00.0\",direction=\"rx\"} 8388608"))
      << body;
  EXPECT_TRUE(promtool_accepts(body));
}

TEST(Export, ALostGpuIsZeroWhileTheOthersAreServed) {
  ExportProcess e("gpu_lost");
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
  ExportProcess e("a100_mig");
  ASSERT_TRUE(e.ready()) << e.process().log();
  std::string body = curl(e.url("/metrics")).body;
  EXPECT_EQ(lines_starting(body, "gpuenv_gpu_up{gpu=\"0\",mig=\"").size(), 3u) << body;
  EXPECT_TRUE(has_line(body,
                       "gpuenv_gpu_memory_total_bytes{gpu=\"0\",mig=\"1\",uuid=\"MIG-5f2e0c1a-0d4b-5a8e-9c3f-"
                       "000000000004\",name=\"NVIDIA A100-SXM4-80GB MIG 2g.20gb\",pci_bus_id=\"00000000:07:00.0\"} "
                       "20937965568"))
      << body;
  EXPECT_TRUE(promtool_accepts(body));
}

TEST(Export, PointerPageAndNotFound) {
  ExportProcess e("h200");
  ASSERT_TRUE(e.ready()) << e.process().log();
  HttpReply root = curl(e.url("/"));
  EXPECT_EQ(root.status, 200);
  EXPECT_NE(root.body.find("href=\"/metrics\""), std::string::npos) << root.body;
  EXPECT_EQ(curl(e.url("/nope")).status, 404);
  EXPECT_EQ(curl(e.url("/metrics?x=1")).status, 200);
}

TEST(Export, HeadGivesTheLengthAndNoBody) {
  ExportProcess e("h200");
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
  ExportProcess e("h200");
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
  // A byte every 2 s would keep it open for 160 s: closed well before that,
  // and not before the 10 s, is the whole request's limit at work.
  bool closed = false;
  for (std::size_t i = 0; i < head.size() && !closed && std::chrono::steady_clock::now() - start < std::chrono::seconds(60);
       ++i) {
    send(fd, &head[i], 1, MSG_NOSIGNAL);
    char c;
    for (int waits = 0; waits < 4 && !closed; ++waits) closed = recv(fd, &c, 1, 0) == 0;  // a byte every 2 s
  }
  double lived = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  close(fd);
  EXPECT_TRUE(closed) << "still open after " << lived << " s";
  EXPECT_GT(lived, 9.0);
  EXPECT_LT(lived, 40.0);  // a loaded machine may be late, not 160 s late
}

// With a minute between rounds, an exporter that waited out the interval
// (or a round) before exiting would take that minute.
TEST(Export, SigtermEndsItWithZeroPromptly) {
  for (int sig : {SIGTERM, SIGINT}) {
    ExportProcess e("h200_8_busy", {"--interval", "60"});
    ASSERT_TRUE(e.ready()) << e.process().log();
    kill(e.process().pid(), sig);
    int code = -1;
    ASSERT_TRUE(e.process().wait_exit(20000, &code)) << "still running 20 s after signal " << sig;
    EXPECT_EQ(code, 0) << e.process().log();
  }
}

TEST(Export, ListensOnEveryAddressOrLocalhostAsGoExportersDo) {
  for (const char* listen : {":0", "localhost:0"}) {
    Background bg({test_paths::gpuenv_bin(), "export", "--listen", listen}, stand_in_env("h200"));
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
  ExportProcess e("h200", {"--log-format", "json"});
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
  ExportProcess e("h200");
  ASSERT_TRUE(e.ready()) << e.process().log();
  kill(e.process().pid(), SIGHUP);
  ASSERT_TRUE(e.process().wait_for_log("SIGHUP ignored", 30000)) << e.process().log();
  EXPECT_EQ(curl(e.url("/metrics")).status, 200) << e.process().log();
  // Still running: SIGTERM ends it with 0 (a SIGHUP that ended it: 129).
  kill(e.process().pid(), SIGTERM);
  int code = -1;
  ASSERT_TRUE(e.process().wait_exit(20000, &code)) << e.process().log();
  EXPECT_EQ(code, 0) << "SIGHUP ended it: " << e.process().log();
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
    opts.timeout_ms = 10000;  // before the fix it served, reading NVML in a tight loop
    ProcessResult r = run_gpuenv({"export", "--listen", "127.0.0.1:0", "--interval", bad}, opts);
    EXPECT_EQ(r.exit_code, 2) << bad << ": " << r.err;
    EXPECT_NE(r.err.find("--interval"), std::string::npos) << r.err;
  }
}

TEST(Export, APortInUseOrNoNvmlExitsOne) {
  ExportProcess first("h200");
  ASSERT_TRUE(first.ready()) << first.process().log();
  std::string taken = "127.0.0.1:" + std::to_string(first.port());
  ProcessResult r = run_gpuenv({"export", "--listen", taken}, stand_ins("h200"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("bind(" + taken + "): Address already in use"), std::string::npos) << r.err;
  ProcessResult none = run_gpuenv({"export", "--listen", "127.0.0.1:0"});  // no NVML at all
  EXPECT_EQ(none.exit_code, 1);
  EXPECT_NE(none.err.find("cannot load NVML"), std::string::npos) << none.err;
}

// The values of `label` on the series `match` selects: what Grafana's
// label_values(match, label) lists.
std::vector<std::string> label_values(int port, const std::string& match, const std::string& label) {
  ProcessResult r = run_process({"curl", "-sS", "-G", "--data-urlencode", "match[]=" + match,
                                 "http://127.0.0.1:" + std::to_string(port) + "/api/v1/label/" + label + "/values"},
                                {{}, "", 10000});
  nlohmann::json j = nlohmann::json::parse(r.out, nullptr, false);
  std::vector<std::string> out;
  if (r.exit_code == 0 && !j.is_discarded() && j.value("status", "") == "success")
    for (const auto& v : j["data"]) out.push_back(v.get<std::string>());
  return out;
}

// A multi-value variable set to All, as Grafana writes it into a regex
// matcher: "(a|b|c)".
std::string all_of(const std::vector<std::string>& values) {
  std::string out = "(";
  for (std::size_t i = 0; i < values.size(); ++i) out += (i ? "|" : "") + values[i];
  return out + ")";
}

// NVIDIA's dcgm-exporter dashboard, every query as written there:
// https://github.com/NVIDIA/dcgm-exporter/blob/068798b0a1cb23d7764fa30f6f305d322ede87e2/grafana/dcgm-exporter-dashboard.json
// (gnetId 12239). Its variables: Hostname = label_values(DCGM_FI_DEV_FB_FREE,
// Hostname), gpu = label_values(DCGM_FI_DEV_FB_FREE{Hostname=~"$Hostname"}, gpu).
struct DashboardQuery {
  const char* panel;
  const char* expr;
  bool gpm;  // a DCGM_FI_PROF_* panel: NVML GPM's, Hopper and later
};
const DashboardQuery kDcgmDashboard[] = {
    {"GPU Temperature", "max(DCGM_FI_DEV_GPU_TEMP{Hostname=~\"$Hostname\", gpu=~\"$gpu\"}) by (Hostname, gpu, uuid)", false},
    {"GPU Avg. Temp", "avg(DCGM_FI_DEV_GPU_TEMP{Hostname=~\"$Hostname\", gpu=~\"$gpu\"})", false},
    {"GPU Power Usage", "max(DCGM_FI_DEV_POWER_USAGE{Hostname=~\"$Hostname\", gpu=~\"$gpu\"}) by (Hostname, gpu, uuid)", false},
    {"GPU Power Total", "sum(max(DCGM_FI_DEV_POWER_USAGE{Hostname=~\"$Hostname\", gpu=~\"$gpu\"}) by (gpu))", false},
    {"GPU SM Clocks", "max(DCGM_FI_DEV_SM_CLOCK{Hostname=~\"$Hostname\", gpu=~\"$gpu\"} * 1000000) by (Hostname, UUID, gpu)", false},
    {"GPU Utilization", "max(DCGM_FI_PROF_GR_ENGINE_ACTIVE{Hostname=~\"$Hostname\", gpu=~\"$gpu\"}) by (Hostname, gpu, GPU_I_ID, GPU_I_PROFILE)", true},
    {"Tensor Core Utilization", "max(DCGM_FI_PROF_PIPE_TENSOR_ACTIVE{Hostname=~\"$Hostname\", gpu=~\"$gpu\"}) by (Hostname, gpu, GPU_I_ID, GPU_I_PROFILE)", true},
    {"GPU Framebuffer Mem Used", "max(DCGM_FI_DEV_FB_USED{Hostname=~\"$Hostname\", gpu=~\"$gpu\"}) by (Hostname, gpu, GPU_I_ID, GPU_I_PROFILE)", false},
};

// Grafana's variables in `expr` replaced by their values.
std::string with_values(std::string expr, const std::map<std::string, std::string>& values) {
  for (const auto& [var, value] : values)
    for (std::size_t at; (at = expr.find(var)) != std::string::npos;) expr.replace(at, var.size(), value);
  return expr;
}

std::string with_variables(const std::string& expr, const std::string& hostname, const std::string& gpu) {
  return with_values(expr, {{"$Hostname", hostname}, {"$gpu", gpu}});
}

// Three stand-in machines (a Hopper, an A100 in MIG mode, one with a lost
// GPU), each its own exporter, scraped by one real Prometheus.
class RealPrometheus : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(access("/usr/bin/prometheus", X_OK), 0) << "no /usr/bin/prometheus: run `make deps`";
    for (const ExportProcess* e : {&hopper_, &a100_, &lost_}) ASSERT_TRUE(e->ready()) << "an exporter did not start";
    // Each target with the node label that deploy/kubernetes's scrape config
    // and ServiceMonitor give it, which gpuenv's own dashboard selects by.
    std::string targets;
    const std::pair<const ExportProcess*, const char*> nodes[] = {
        {&hopper_, "hopper-node"}, {&a100_, "a100-mig-node"}, {&lost_, "lost-gpu-node"}};
    for (auto [e, node] : nodes)
      targets += "      - targets: ['127.0.0.1:" + std::to_string(e->port()) + "']\n        labels: {node: " + node + "}\n";
    std::string config = dir_.file("prometheus.yml",
                                   "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
                                   "scrape_configs:\n  - job_name: gpuenv\n    static_configs:\n" + targets);
    port_ = free_port();
    prom_ = std::make_unique<Background>(
        std::vector<std::string>{"/usr/bin/prometheus", "--config.file=" + config,
                                 "--storage.tsdb.path=" + dir_.path() + "/data",
                                 "--web.listen-address=127.0.0.1:" + std::to_string(port_), "--log.level=warn"},
        std::map<std::string, std::string>{});
    int up = -1;
    for (int waited = 0; waited < 20000 && up != 3; waited += 250) {
      std::this_thread::sleep_for(std::chrono::milliseconds(250));
      up = series_count(port_, "up{job=\"gpuenv\"} == 1");
    }
    ASSERT_EQ(up, 3) << "Prometheus did not scrape the three exporters: " << prom_->log();
  }
  // NVIDIA's dashboard (gnetId 12239) selects Hostname, dcgm-exporter's
  // label before its rename to hostname: the flag that keeps it.
  ExportProcess hopper_{"h200_8_busy", {"--hostname-label", "Hostname"}, {{"NODE_NAME", "hopper-node"}}};
  ExportProcess a100_{"a100_mig_busy", {"--hostname-label", "Hostname"}, {{"NODE_NAME", "a100-mig-node"}}};
  ExportProcess lost_{"gpu_lost_busy", {"--hostname-label", "Hostname"}, {{"NODE_NAME", "lost-gpu-node"}}};
  ScratchDir dir_;
  int port_ = 0;
  std::unique_ptr<Background> prom_;
};

TEST_F(RealPrometheus, ItScrapesGpuenvsOwnSeries) {
  EXPECT_EQ(series_count(port_, "gpuenv_gpu_up{mig=\"\"}"), 8 + 1 + 3);
  EXPECT_EQ(series_count(port_, "gpuenv_gpu_up == 0"), 1);  // the lost L4
  EXPECT_EQ(series_count(port_, "gpuenv_gpu_utilization_ratio == 0.75"), 1);  // the Hopper's GPU 7
  EXPECT_EQ(series_count(port_, "gpuenv_gpu_xid_last == 79"), 1);
  for (const ExportProcess* e : {&hopper_, &a100_, &lost_}) EXPECT_TRUE(promtool_accepts(curl(e->url("/metrics")).body));
}

TEST_F(RealPrometheus, EveryQueryOfNvidiasDcgmExporterDashboardReturnsSeries) {
  std::vector<std::string> hosts = label_values(port_, "DCGM_FI_DEV_FB_FREE", "Hostname");
  EXPECT_EQ(hosts, (std::vector<std::string>{"a100-mig-node", "hopper-node", "lost-gpu-node"}));
  std::string host = all_of(hosts);
  std::vector<std::string> gpus = label_values(port_, "DCGM_FI_DEV_FB_FREE{Hostname=~\"" + host + "\"}", "gpu");
  EXPECT_EQ(gpus, (std::vector<std::string>{"0", "1", "2", "3", "4", "5", "6", "7"}));
  std::string gpu = all_of(gpus);
  // The GPM panels: the Hopper stand-in answers NVML GPM, the A100 does not.
  EXPECT_GT(series_count(port_, "DCGM_FI_PROF_GR_ENGINE_ACTIVE"), 0);
  for (const DashboardQuery& q : kDcgmDashboard) {
    std::string expr = with_variables(q.expr, host, gpu);
    EXPECT_GT(series_count(port_, expr), 0) << q.panel << ": " << expr;
  }
  // Per machine, the series a panel draws: a line per GPU, a lost GPU none,
  // a MIG GPU its instances beside itself.
  auto on = [&](const char* node, const DashboardQuery& q) {
    return series_count(port_, with_variables(q.expr, node, gpu));
  };
  const DashboardQuery& temperature = kDcgmDashboard[0];
  const DashboardQuery& fb_used = kDcgmDashboard[7];
  EXPECT_EQ(on("hopper-node", temperature), 8);
  EXPECT_EQ(on("a100-mig-node", temperature), 1);
  EXPECT_EQ(on("lost-gpu-node", temperature), 2);
  EXPECT_EQ(on("a100-mig-node", fb_used), 1 + 3);
  EXPECT_EQ(series_count(port_, "DCGM_FI_DEV_FB_USED{Hostname=\"a100-mig-node\",GPU_I_PROFILE=\"2g.20gb\"}"), 3);
  EXPECT_EQ(on("hopper-node", kDcgmDashboard[6]), 8);
  for (const DashboardQuery& q : kDcgmDashboard) {  // no GPM before Hopper: absent, not zero
    if (q.gpm) {
      EXPECT_EQ(on("a100-mig-node", q), 0) << q.panel;
    }
  }
}

// series_count, given up to 30 s: a rate() or a GPM ratio needs two
// scrapes before it has a value.
int series_count_soon(int port, const std::string& query) {
  int n = series_count(port, query);
  for (int waited = 0; n <= 0 && waited < 30000; waited += 250) {
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
    n = series_count(port, query);
  }
  return n;
}

// gpuenv's own dashboard, every query as deploy/kubernetes/grafana-dashboard.json
// holds it, with its variables set to All as Grafana writes them: each draws
// something from the three machines (the Hopper stand-in answers GPM, has
// NVLink traffic and Xids).
TEST_F(RealPrometheus, EveryQueryOfGpuenvsOwnDashboardReturnsSeries) {
  std::ifstream in(test_paths::tests_dir() + "/../deploy/kubernetes/grafana-dashboard.json");
  nlohmann::json dash = nlohmann::json::parse(in, nullptr, false);
  ASSERT_FALSE(dash.is_discarded());
  std::vector<std::string> nodes = label_values(port_, "gpuenv_gpu_up", "node");  // the node variable
  EXPECT_EQ(nodes, (std::vector<std::string>{"a100-mig-node", "hopper-node", "lost-gpu-node"}));
  std::vector<std::string> gpus = label_values(port_, "gpuenv_gpu_up{node=~\"" + all_of(nodes) + "\"}", "gpu");
  EXPECT_EQ(gpus, (std::vector<std::string>{"0", "1", "2", "3", "4", "5", "6", "7"}));
  std::map<std::string, std::string> all = {{"$__rate_interval", "1m"}, {"$node", all_of(nodes)}, {"$gpu", all_of(gpus)}};
  int queries = 0;
  for (const auto& panel : dash["panels"])
    for (const auto& target : panel.value("targets", nlohmann::json::array())) {
      std::string expr = with_values(target["expr"].get<std::string>(), all);
      ++queries;
      EXPECT_GT(series_count_soon(port_, expr), 0) << panel["title"] << ": " << expr;
    }
  EXPECT_GE(queries, 30);
  // The stat panels count GPUs, not MIG devices: 8 + 1 + 2 up, the L4 lost.
  std::string up = "sum(gpuenv_gpu_up{node=~\"$node\", gpu=~\"$gpu\", mig=\"\"})";
  EXPECT_EQ(series_count(port_, with_values(up, all) + " == 11"), 1);
  // GPM's panel: seven engines of each of the Hopper's eight GPUs (GPU 6
  // runs a bf16 GEMM loop), none of the A100's or the L4s'.
  std::string gpm = "gpuenv_gpu_activity_ratio{node=~\"$node\", gpu=~\"$gpu\"}";
  std::string gpus_all = all_of(gpus);
  EXPECT_EQ(series_count(port_, with_values(gpm, {{"$node", "hopper-node"}, {"$gpu", gpus_all}})), 8 * 7);
  EXPECT_EQ(series_count(port_, with_values(gpm, {{"$node", "hopper-node"}, {"$gpu", "6"}}) + " == 0.94"), 1);
  EXPECT_EQ(series_count(port_, with_values(gpm, {{"$node", "(a100-mig-node|lost-gpu-node)"}, {"$gpu", gpus_all}})), 0);
}

}  // namespace
}  // namespace gpuenv::testing
