// PodResourcesWatcher against a kubelet that hangs: the List holds the
// watcher's own thread, never a caller of latest() (what every scrape of
// gpuenv export reads).
#include "sense/kubelet/pod_resources.h"

#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>

#include "container_support.h"
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
          [&](const PodListRound&, bool) { ++rounds; });
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

}  // namespace
}  // namespace gpuenv
