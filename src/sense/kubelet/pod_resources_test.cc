// PodResourcesWatcher against a kubelet that hangs: the List holds the
// watcher's own thread, never a caller of latest() (what every scrape of
// gpuenv export reads). The helper's answer read (read_kubelet_answer), and
// a List whose helper is missing.
#include "sense/kubelet/pod_resources.h"

#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <utility>
#include <vector>

#include "sense/capture.h"

#include "container_support.h"
#include "test_paths.h"
#include "text_files.h"
#include "wait_until.h"

namespace gpuenv {
namespace {

// A unix socket that takes connections and never answers.
class HangingKubelet {
 public:
  explicit HangingKubelet(const std::string& path) : path_(path) {
    fd_ = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    sockaddr_un sa{};
    sa.sun_family = AF_UNIX;
    std::snprintf(sa.sun_path, sizeof sa.sun_path, "%s", path.c_str());
    ok_ = fd_ >= 0 && bind(fd_, reinterpret_cast<sockaddr*>(&sa), sizeof sa) == 0 && listen(fd_, 16) == 0;
  }
  ~HangingKubelet() { hang_up(); }
  HangingKubelet(const HangingKubelet&) = delete;
  HangingKubelet& operator=(const HangingKubelet&) = delete;

  bool ok() const { return ok_; }
  /// True once a caller has connected: its List is in flight.
  bool called() const {
    pollfd p{fd_, POLLIN, 0};
    return fd_ >= 0 && poll(&p, 1, 0) == 1;
  }
  /// Closes the connections and the socket: the List in flight fails at once.
  void hang_up() {
    if (fd_ < 0) return;
    for (int c; (c = accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC)) >= 0;) close(c);
    close(fd_);
    fd_ = -1;
    unlink(path_.c_str());
  }

 private:
  std::string path_;
  int fd_ = -1;
  bool ok_ = false;
};

// latest() answers while the List is in flight (its deadline a minute away,
// no round reported yet); a latest() that waited for the List would take
// that minute.
TEST(PodResourcesWatcher, AHangingListNeverHoldsLatest) {
  testing::ScratchDir dir;
  std::string socket = dir.path() + "/kubelet.sock";
  HangingKubelet kubelet(socket);
  ASSERT_TRUE(kubelet.ok());
  std::atomic<int> rounds{0};
  PodResourcesWatcher w;
  w.start(socket, std::chrono::hours(1), std::chrono::minutes(1),
          [&](const PodListRound&, bool) { ++rounds; }, test_paths::kubelet_helper());
  ASSERT_TRUE(testing::wait_until([&] { return kubelet.called(); }));
  auto t0 = std::chrono::steady_clock::now();
  std::shared_ptr<const PodDevices> now = w.latest();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, testing::kEventBound) << "latest() waited for the List";
  EXPECT_EQ(rounds, 0) << "the List was over already";
  ASSERT_NE(now, nullptr);
  EXPECT_EQ(now->size(), 0u);
  kubelet.hang_up();
  w.stop();
  EXPECT_EQ(rounds, 1);  // the List failed
}

TEST(KubeletAnswer, DevicesOfNvidiaResourcesOnly) {
  PodDevices d;
  std::string err;
  int kind = 99;
  ASSERT_EQ(read_kubelet_answer(R"({"ok": true, "devices": [
      ["nvidia.com/gpu", "GPU-aaaa", "train-0", "ml", "trainer"],
      ["example.com/fpga", "fpga0", "other", "ml", "c"]], "logs": []})",
                                &d, &err, &kind),
            PodListStatus::kOk)
      << err;
  EXPECT_EQ(d.size(), 1u);
  EXPECT_EQ(kind, 99) << "kind is a failure's only";
}

TEST(KubeletAnswer, AFailureKeepsItsCodeAndText) {
  PodDevices d;
  d.add("nvidia.com/gpu", "GPU-old", {"p", "n", "c"});
  std::string err;
  int kind = 0;
  ASSERT_EQ(read_kubelet_answer(R"({"ok": false, "code": 4, "error": "no answer in time"})", &d, &err, &kind),
            PodListStatus::kFailed);
  EXPECT_EQ(err, "no answer in time");
  EXPECT_EQ(kind, 4);
  EXPECT_EQ(d.size(), 1u) << "a failure leaves *out alone";
}

TEST(KubeletAnswer, WhatIsNotTheHelpersFormatFailsNamingIt) {
  const std::pair<const char*, const char*> cases[] = {
      {"", "is not its JSON object"},
      {"[1]", "is not its JSON object"},
      {R"({"ok": "yes"})", "is not its JSON object"},
      {R"({"ok": true})", "has no devices"},
      {R"({"ok": true, "devices": {}})", "has no devices"},
      {R"({"ok": true, "devices": [["nvidia.com/gpu", "GPU-a", "p", "n"]]})", "not 5 strings"},
      {R"({"ok": true, "devices": [["nvidia.com/gpu", "GPU-a", "p", "n", 5]]})", "not 5 strings"},
      {R"({"ok": false, "error": "x"})", "no code and error"},
      {R"({"ok": false, "code": "4", "error": "x"})", "no code and error"},
  };
  for (const auto& [answer, says] : cases) {
    PodDevices d;
    std::string err;
    int kind = 0;
    EXPECT_EQ(read_kubelet_answer(answer, &d, &err, &kind), PodListStatus::kFailed) << answer;
    EXPECT_TRUE(testing::contains(err, says)) << answer << ": " << err;
    EXPECT_EQ(kind, kKubeletHelperFailed) << answer;
  }
}

TEST(KubeletAnswer, TheLibrariesLinesGoToTheSink) {
  std::vector<std::string> said;
  route_kubelet_library_logs([&](Severity s, const std::string& library, const std::string& text) {
    said.push_back(std::to_string(static_cast<int>(s)) + " " + library + ": " + text);
  });
  PodDevices d;
  std::string err;
  int kind = 0;
  read_kubelet_answer(R"({"ok": false, "code": 13, "error": "e", "logs": [[1, "libprotobuf", "not UTF-8"],
                         [2, "grpc", "broken"], ["x", "grpc", "ill-formed: skipped"], [0, "grpc"]]})",
                      &d, &err, &kind);
  route_kubelet_library_logs(nullptr);
  EXPECT_EQ(said, (std::vector<std::string>{"1 libprotobuf: not UTF-8", "2 grpc: broken"}));
}

TEST(KubeletHelper, AMissingHelperFailsTheListNamingTheFix) {
  testing::ScratchDir dir;
  std::string socket = dir.path() + "/kubelet.sock";
  HangingKubelet kubelet(socket);
  ASSERT_TRUE(kubelet.ok());
  PodDevices d;
  std::string err;
  int kind = 0;
  EXPECT_EQ(list_pod_devices(socket, std::chrono::seconds(1), &d, &err, &kind, dir.path() + "/gpuenv-kubelet"),
            PodListStatus::kFailed);
  EXPECT_EQ(kind, kKubeletHelperFailed);
  EXPECT_TRUE(testing::contains(err, "gpuenv-kubelet is not at " + dir.path() + "/gpuenv-kubelet")) << err;
  EXPECT_TRUE(testing::contains(err, "GPUENV_KUBELET_HELPER")) << err;
  EXPECT_FALSE(kubelet.called()) << "no helper, no call";
}

TEST(KubeletHelper, NoSocketNoHelperNeeded) {
  PodDevices d;
  std::string err;
  EXPECT_EQ(list_pod_devices("/nonexistent/kubelet.sock", std::chrono::seconds(1), &d, &err, nullptr,
                             "/nonexistent/gpuenv-kubelet"),
            PodListStatus::kNoSocket);
}

TEST(KubeletHelper, RefusesBadArguments) {
  for (std::vector<std::string> args : {std::vector<std::string>{}, {"/s", "0", "10"}, {"/s", "10", "x"},
                                        {"/s", "10", "10", "extra"}}) {
    std::vector<std::string> argv = {test_paths::kubelet_helper()};
    argv.insert(argv.end(), args.begin(), args.end());
    std::string out, err;
    EXPECT_FALSE(capture_output(argv, {}, &out, &err));
    EXPECT_TRUE(testing::contains(err, "exited with status 2")) << err;
  }
}

}  // namespace
}  // namespace gpuenv
