// gpuenv export's pod attribution end to end: the stand-in NVML for the GPUs
// and a stand-in kubelet (kubelet/stand_in_kubelet.py, the real
// v1.PodResourcesLister on a unix socket) for who holds them.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "container_support.h"
#include "export_process.h"
#include "process.h"
#include "wait_until.h"
#include "test_paths.h"
#include "text_files.h"
#include "metric_lines.h"

namespace gpuenv::testing {
namespace {

const std::string kPodsGpu6 = "GPU-6c1f0c3e-8a52-4b0e-9d3a-2f1e7b9c4d16";

void write_file(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

std::string pod_json(const std::string& pod, const std::string& ns, const std::string& container,
                     const std::string& resource, const std::string& ids) {
  return "{\"name\": \"" + pod + "\", \"namespace\": \"" + ns + "\", \"containers\": [{\"name\": \"" + container +
         "\", \"devices\": [{\"resource_name\": \"" + resource + "\", \"device_ids\": [" + ids +
         "], \"topology\": {\"nodes\": [{\"ID\": 1}]}}]}]}";
}

// The stand-in kubelet on DIR/kubelet.sock, serving DIR/pods.json.
class Kubelet {
 public:
  Kubelet(const std::string& dir, const std::string& mode)
      : socket_(dir + "/kubelet.sock"),
        bg_({test_paths::kubelet_python(), (test_paths::tests_dir() + "/kubelet/stand_in_kubelet.py"), "--socket", socket_,
             "--pods", dir + "/pods.json", "--pb2-dir", test_paths::kubelet_pb2_dir(), "--mode", mode},
            {}) {
    ready_ = bg_.wait_for_log("ready", 30000);
  }
  bool ready() const { return ready_; }
  const std::string& socket() const { return socket_; }
  /// Waits until it has taken `n` List calls.
  bool wait_for_lists(int n, int timeout_ms) {
    return bg_.wait_for_log("list " + std::to_string(n) + "\n", timeout_ms);
  }
  std::string log() const { return bg_.log(); }

 private:
  std::string socket_;
  Background bg_;
  bool ready_ = false;
};

// The exporter with `--pod-resources-socket socket` and `more`.
ExportStart pods(const std::string& scenario, const std::string& socket, std::vector<std::string> more = {},
                 std::map<std::string, std::string> env = {}) {
  more.insert(more.begin(), {"--pod-resources-socket", socket});
  return {scenario, more, env, "http"};
}

using testing::contains;

// How many lines of `text` hold `part`.
std::size_t count(const std::string& text, const std::string& part) {
  std::size_t n = 0;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) n += contains(line, part);
  return n;
}

const std::string kTrainer = "pod=\"train-0\",namespace=\"ml\",container=\"trainer\"";

TEST(ExportPods, TheAssignedGpusSeriesCarryThePodAndTheOthersNone) {
  std::string dir = make_temp_dir("gpuenv-kubelet");
  write_file(dir + "/pods.json",
             "[" + pod_json("train-0", "ml", "trainer", "nvidia.com/gpu", "\"" + kPodsGpu6 + "\"") + ", " +
                 pod_json("web-1", "web", "nginx", "example.com/fpga", "\"GPU-6c1f0c3e-8a52-4b0e-9d3a-2f1e7b9c4d15\"") +
                 "]");
  Kubelet kubelet(dir, "serve");
  ASSERT_TRUE(kubelet.ready()) << kubelet.log();
  ExportProcess e(pods("h200_8_busy", kubelet.socket()));
  ASSERT_TRUE(e.ready()) << e.process().log();
  std::string body = e.scrape_until(kTrainer);
  std::vector<std::string> temp = lines_starting(body, "DCGM_FI_DEV_GPU_TEMP{");
  ASSERT_EQ(temp.size(), 8u) << body;
  for (const std::string& line : temp)
    EXPECT_EQ(contains(line, kTrainer), contains(line, "UUID=\"" + kPodsGpu6 + "\"")) << line;
  EXPECT_FALSE(contains(body, "pod=\"web-1\"")) << "not an NVIDIA resource";
  for (const std::string& line : lines_starting(body, "gpuenv_gpu_up{"))
    EXPECT_EQ(contains(line, kTrainer), contains(line, "uuid=\"" + kPodsGpu6 + "\"")) << line;
  EXPECT_TRUE(e.process().wait_for_log("pod labels from the kubelet at " + kubelet.socket() + " (1 GPU", 30000))
      << e.process().log();

  // The pod ends and another takes GPU 6 as a time-sliced replica.
  write_file(dir + "/pods.json",
             "[" + pod_json("eval-3", "ml", "eval", "nvidia.com/gpu", "\"" + kPodsGpu6 + "::2\"") + "]");
  body = e.scrape_until("pod=\"eval-3\"");
  EXPECT_FALSE(contains(body, kTrainer)) << body;
  EXPECT_EQ(lines_starting(body, "DCGM_FI_DEV_GPU_TEMP{gpu=\"6\"").size(), 1u);
  EXPECT_TRUE(contains(lines_starting(body, "DCGM_FI_DEV_GPU_TEMP{gpu=\"6\"")[0],
                  "pod=\"eval-3\",namespace=\"ml\",container=\"eval\"")) << body;
}

TEST(ExportPods, AMigDeviceCarriesItsPodAndItsGpuDoesNot) {
  std::string dir = make_temp_dir("gpuenv-kubelet");
  write_file(dir + "/pods.json", "[" +
                                     pod_json("train-0", "ml", "trainer", "nvidia.com/mig-2g.20gb",
                                              "\"MIG-5f2e0c1a-0d4b-5a8e-9c3f-000000000004\"") +
                                     "]");
  Kubelet kubelet(dir, "serve");
  ASSERT_TRUE(kubelet.ready()) << kubelet.log();
  ExportProcess e(pods("a100_mig", kubelet.socket()));
  ASSERT_TRUE(e.ready()) << e.process().log();
  std::string body = e.scrape_until(kTrainer);
  std::vector<std::string> fb = lines_starting(body, "DCGM_FI_DEV_FB_USED{");
  ASSERT_EQ(fb.size(), 4u) << body;  // the GPU and its three MIG devices
  for (const std::string& line : fb) EXPECT_EQ(contains(line, kTrainer), contains(line, "GPU_I_ID=\"4\"")) << line;
  for (const std::string& line : lines_starting(body, "DCGM_FI_DEV_GPU_TEMP{"))
    EXPECT_FALSE(contains(line, "pod=")) << "the whole GPU is no one's: " << line;
  for (const std::string& line : lines_starting(body, "gpuenv_gpu_up{"))
    EXPECT_EQ(contains(line, kTrainer), contains(line, "mig=\"1\"")) << line;
}

// Scrapes until the exporter's log holds `line`: every scrape is answered
// meanwhile. (That a List in flight never holds a scrape is
// PodResourcesWatcher.AHangingListNeverHoldsLatest's proof.)
bool scrapes_answer_until(ExportProcess& e, const std::string& line) {
  bool all = true;
  bool came = wait_until([&] {
    all = all && contains(e.scrape(), "gpuenv_gpu_up{");
    return contains(e.process().log(), line);
  });
  EXPECT_TRUE(all) << "a scrape went unanswered";
  return came;
}

TEST(ExportPods, AHangingKubeletIsWarnedOfAndNeverHoldsAScrape) {
  std::string dir = make_temp_dir("gpuenv-kubelet");
  Kubelet kubelet(dir, "hang");
  ASSERT_TRUE(kubelet.ready()) << kubelet.log();
  ExportProcess e(pods("h200", kubelet.socket()));
  ASSERT_TRUE(e.ready()) << e.process().log();
  // Each List waits out its 1 s deadline, scrape after scrape meanwhile.
  EXPECT_TRUE(scrapes_answer_until(
      e, "no pod labels: v1.PodResourcesLister/List on " + kubelet.socket() + ": no answer in time"))
      << e.process().log();
  std::string log = e.process().log();
  std::size_t first = log.find("no pod labels");
  EXPECT_EQ(log.find("no pod labels", first + 1), std::string::npos) << "one line, not one a refresh: " << log;
  EXPECT_FALSE(contains(e.scrape(), "pod="));
}

// The gRPC client is a program of its own (gpuenv-kubelet, beside gpuenv in
// the build tree as in an install); without it the exporter serves its
// metrics with no pod labels and says once what is missing and the fix.
TEST(ExportPods, AMissingKubeletClientIsWarnedOfOnceAndTheMetricsStay) {
  std::string dir = make_temp_dir("gpuenv-kubelet");
  write_file(dir + "/pods.json", "[" + pod_json("train-0", "ml", "trainer", "nvidia.com/gpu", "\"" + kPodsGpu6 + "\"") + "]");
  Kubelet kubelet(dir, "serve");
  ASSERT_TRUE(kubelet.ready()) << kubelet.log();
  ExportProcess e(pods("h200_8_busy", kubelet.socket(), {"--interval", "0.2"},
                 {{"GPUENV_KUBELET_HELPER", dir + "/no-such-client"}}));
  ASSERT_TRUE(e.ready()) << e.process().log();
  EXPECT_TRUE(scrapes_answer_until(e, "export: no pod labels: gpuenv's kubelet client gpuenv-kubelet is not at " +
                                          dir + "/no-such-client: install it beside the gpuenv binary"))
      << e.process().log();
  std::string body = e.scrape();
  EXPECT_TRUE(contains(body, "gpuenv_gpu_up{")) << body;
  EXPECT_FALSE(contains(body, "pod=")) << body;
  EXPECT_EQ(count(e.process().log(), "no pod labels"), 1u) << "once, not every round: " << e.process().log();
}

TEST(ExportPods, ARefusedSocketIsWarnedOfAndAMissingOneIsSilent) {
  std::string dir = make_temp_dir("gpuenv-kubelet");
  std::string dead = dir + "/dead.sock";  // a socket file nothing listens on
  int fd = socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un sa{};
  sa.sun_family = AF_UNIX;
  std::snprintf(sa.sun_path, sizeof sa.sun_path, "%s", dead.c_str());
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa), 0);
  close(fd);
  ExportProcess refused(pods("h200", dead));
  ASSERT_TRUE(refused.ready()) << refused.process().log();
  EXPECT_TRUE(scrapes_answer_until(refused, "unavailable")) << refused.process().log();
  EXPECT_TRUE(contains(refused.process().log(), "no pod labels: v1.PodResourcesLister/List on " + dead));

  // No socket: silent, refresh after refresh, until a kubelet comes.
  std::string later = dir + "/not-mounted";
  ExportProcess missing(pods("h200", later + "/kubelet.sock"));
  ASSERT_TRUE(missing.ready()) << missing.process().log();
  std::string body = missing.scrape();
  EXPECT_TRUE(contains(body, "gpuenv_gpu_up{")) << body;
  EXPECT_FALSE(contains(body, "pod=")) << body;
  ASSERT_EQ(mkdir(later.c_str(), 0700), 0);
  write_file(later + "/pods.json", "[]");
  Kubelet kubelet(later, "serve");
  ASSERT_TRUE(kubelet.ready()) << kubelet.log();
  EXPECT_TRUE(missing.process().wait_for_log("pod labels from the kubelet at " + kubelet.socket(), 30000))
      << missing.process().log();
  EXPECT_FALSE(contains(missing.process().log(), "no pod labels")) << missing.process().log();
}

// Kubernetes allows 253 bytes for a pod's name: a longer one is no label,
// and the warning of it is not repeated every refresh.
TEST(ExportPods, NamesLongerThanKubernetesAllowsAreDroppedWithOneWarning) {
  std::string dir = make_temp_dir("gpuenv-kubelet");
  std::string gpu5 = "GPU-6c1f0c3e-8a52-4b0e-9d3a-2f1e7b9c4d15";
  write_file(dir + "/pods.json", "[" + pod_json(std::string(254, 'p'), "ml", "trainer", "nvidia.com/gpu",
                                                "\"" + kPodsGpu6 + "\"") +
                                     ", " + pod_json("train-0", "ml", "trainer", "nvidia.com/gpu", "\"" + gpu5 + "\"") +
                                     "]");
  Kubelet kubelet(dir, "serve");
  ASSERT_TRUE(kubelet.ready()) << kubelet.log();
  ExportProcess e(pods("h200_8_busy", kubelet.socket()));
  ASSERT_TRUE(e.ready()) << e.process().log();
  std::string body = e.scrape_until(kTrainer);
  for (const std::string& line : lines_starting(body, "gpuenv_gpu_up{"))
    EXPECT_EQ(contains(line, kTrainer), contains(line, "uuid=\"" + gpu5 + "\"")) << line;
  EXPECT_FALSE(contains(body, "ppppppppp")) << body;
  EXPECT_TRUE(e.process().wait_for_log("1 GPU and MIG devices left without pod labels: a pod name of 254 bytes, "
                                       "over the 253 Kubernetes allows",
                                       5000))
      << e.process().log();
  ASSERT_TRUE(kubelet.wait_for_lists(10, 15000)) << kubelet.log();
  EXPECT_EQ(count(e.process().log(), "left without pod labels"), 1u) << e.process().log();
}

// A 3 MB pod name fits gRPC's default 4 MB; the exporter takes 1 MiB.
TEST(ExportPods, AnAnswerOverTheCapIsRefusedAndTheMetricsStaySmall) {
  std::string dir = make_temp_dir("gpuenv-kubelet");
  write_file(dir + "/pods.json", "[" + pod_json(std::string(3 << 20, 'p'), "ml", "trainer", "nvidia.com/gpu",
                                                "\"" + kPodsGpu6 + "\"") +
                                     "]");
  Kubelet kubelet(dir, "serve");
  ASSERT_TRUE(kubelet.ready()) << kubelet.log();
  ExportProcess e(pods("h200_8_busy", kubelet.socket()));
  ASSERT_TRUE(e.ready()) << e.process().log();
  EXPECT_TRUE(e.process().wait_for_log("no pod labels: v1.PodResourcesLister/List on " + kubelet.socket() +
                                           ": an answer over the 1048576 bytes gpuenv takes",
                                       10000))
      << e.process().log().substr(0, 2000);
  std::string body = e.scrape();
  EXPECT_TRUE(contains(body, "gpuenv_gpu_up{")) << body.substr(0, 2000);
  EXPECT_FALSE(contains(body, "pod=")) << body.substr(0, 2000);
  EXPECT_LT(body.size(), 256u * 1024);
}

// Every line a JSON object: libprotobuf's complaint about a name that is not
// UTF-8 too, said once rather than every refresh.
TEST(ExportPods, ANameNotUtf8IsLoggedAsJsonAndNotEveryRefresh) {
  std::string dir = make_temp_dir("gpuenv-kubelet");
  write_file(dir + "/pods.json",
             "[" + pod_json("train-<invalid-utf8>", "ml", "trainer", "nvidia.com/gpu", "\"" + kPodsGpu6 + "\"") + "]");
  Kubelet kubelet(dir, "serve");
  ASSERT_TRUE(kubelet.ready()) << kubelet.log();
  ExportProcess e(pods("h200", kubelet.socket(), {"--interval", "0.1", "--log-format", "json"}));
  ASSERT_TRUE(e.ready()) << e.process().log();
  ASSERT_TRUE(kubelet.wait_for_lists(20, 15000)) << kubelet.log();
  ASSERT_TRUE(e.process().wait_for_log("libprotobuf", 5000)) << e.process().log();
  std::string log = e.process().log();
  std::istringstream in(log);
  for (std::string line; std::getline(in, line);)
    EXPECT_FALSE(nlohmann::json::parse(line, nullptr, false).is_discarded()) << "not JSON: " << line;
  EXPECT_EQ(count(log, "libprotobuf"), 1u) << log;
  EXPECT_EQ(count(log, "no pod labels"), 1u) << log;
  EXPECT_FALSE(contains(e.scrape(), "pod="));
}

// A kubelet whose error text differs every time is the same failure.
TEST(ExportPods, AFailureWhoseTextChangesIsWarnedOfOnceAMinute) {
  std::string dir = make_temp_dir("gpuenv-kubelet");
  Kubelet kubelet(dir, "fail");
  ASSERT_TRUE(kubelet.ready()) << kubelet.log();
  ExportProcess e(pods("h200", kubelet.socket(), {"--interval", "0.1"}));
  ASSERT_TRUE(e.ready()) << e.process().log();
  ASSERT_TRUE(kubelet.wait_for_lists(20, 15000)) << kubelet.log();
  EXPECT_TRUE(e.process().wait_for_log("kubelet failure 1", 5000)) << e.process().log();
  EXPECT_EQ(count(e.process().log(), "no pod labels"), 1u) << e.process().log();
}

}  // namespace
}  // namespace gpuenv::testing
