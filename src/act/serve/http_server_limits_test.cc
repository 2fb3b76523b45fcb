#include "act/serve/http_server_limits.h"

#include <event2/event.h>
#include <event2/http.h>
#include <event2/listener.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <memory>
#include <string>
#include <thread>

#include "act/serve/http_server.h"

namespace gpuenv {
namespace {

using std::chrono::milliseconds;

// A loopback listener and clients of it, closed at the end.
struct Loopback {
  int listener = -1;
  int port = 0;
  std::vector<int> fds;
  Loopback() {
    ListenAddress want{"127.0.0.1", 0, false}, bound;
    std::string err;
    listener = listen_tcp(want, &bound, &err);
    port = bound.port;
  }
  ~Loopback() {
    for (int fd : fds) close(fd);
    if (listener >= 0) close(listener);
  }
  int connect_client() {
    int c = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_port = htons(static_cast<std::uint16_t>(port));
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connect(c, reinterpret_cast<sockaddr*>(&sa), sizeof sa);  // loopback: established at once
    fds.push_back(c);
    return c;
  }
};

// Whether the server closed client `fd` (it reads end of file), reading
// nothing it answered.
bool closed_by_server(int fd) {
  char c;
  return recv(fd, &c, 1, MSG_DONTWAIT | MSG_PEEK) == 0;
}

TEST(HttpLimits, TcpQuietCountsFromTheHandshakeOrTheLastByte) {
  Loopback lo;
  ASSERT_GE(lo.listener, 0);
  int silent = lo.connect_client();
  std::this_thread::sleep_for(milliseconds(150));  // waiting to be accepted counts
  int talker = lo.connect_client();
  ASSERT_EQ(send(talker, "G", 1, 0), 1);
  std::this_thread::sleep_for(milliseconds(20));
  int a = accept(lo.listener, nullptr, nullptr), b = accept(lo.listener, nullptr, nullptr);
  ASSERT_TRUE(tcp_quiet_for(a).has_value());
  EXPECT_GE(*tcp_quiet_for(a), milliseconds(140));
  EXPECT_LT(*tcp_quiet_for(b), milliseconds(140));
  int pipe_fds[2];
  ASSERT_EQ(pipe(pipe_fds), 0);
  EXPECT_FALSE(tcp_quiet_for(pipe_fds[0]).has_value());
  for (int fd : {a, b, pipe_fds[0], pipe_fds[1]}) close(fd);
  (void)silent;
}

struct EventBaseFree {
  void operator()(event_base* b) const { event_base_free(b); }
};
struct EvhttpFree {
  void operator()(evhttp* h) const { evhttp_free(h); }
};

void answer_ok(evhttp_request* req, void*) { evhttp_send_reply(req, 200, "OK", nullptr); }

// The exporter's server with a table of four (the least connection_cap
// gives) and a grace of 300 ms (wide, so that a loaded machine keeps to the
// steps below).
struct SmallServer {
  std::unique_ptr<event_base, EventBaseFree> base{event_base_new()};
  std::unique_ptr<ConnectionGuard> guard;  // outlives http
  std::unique_ptr<evhttp, EvhttpFree> http{evhttp_new(base.get())};
  explicit SmallServer(int listener) {
    evhttp_bound_socket* bound = evhttp_accept_socket_with_handle(http.get(), dup(listener));
    HttpLimits limits;
    limits.max_connections = 4;
    limits.grace = milliseconds(300);
    guard = std::make_unique<ConnectionGuard>(base.get(), http.get(), evhttp_bound_socket_get_listener(bound), limits);
    evhttp_set_gencb(http.get(), answer_ok, nullptr);
  }
  ~SmallServer() { guard->detach(); }
  void run_for(milliseconds ms) {
    timeval tv{0, static_cast<suseconds_t>(ms.count() * 1000)};
    event_base_loopexit(base.get(), &tv);
    event_base_dispatch(base.get());
  }
};

TEST(ConnectionGuard, AFullTableClosesTheOldestSilentClientAndKeepsOnesWithinTheirGrace) {
  Loopback lo;
  ASSERT_GE(lo.listener, 0);
  ASSERT_GE(connection_cap(4), 4);
  SmallServer server(lo.listener);
  int oldest = lo.connect_client();
  server.run_for(milliseconds(350));
  std::vector<int> newer{lo.connect_client()};  // the first 20 ms before the others
  server.run_for(milliseconds(20));
  for (int i = 0; i < 3; ++i) newer.push_back(lo.connect_client());  // the last just accepted when full
  server.run_for(milliseconds(30));
  EXPECT_TRUE(closed_by_server(oldest)) << "silent 350 ms, with the table full";
  for (int fd : newer) EXPECT_FALSE(closed_by_server(fd)) << "silent, but within its grace";
  int late = lo.connect_client();  // waits: every one in the table is within its grace
  server.run_for(milliseconds(50));
  for (int fd : newer) EXPECT_FALSE(closed_by_server(fd)) << "within its grace, with one waiting";
  const char keep_alive[] = "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n";
  for (int fd : {newer.back(), late})
    ASSERT_EQ(send(fd, keep_alive, sizeof keep_alive - 1, 0), static_cast<ssize_t>(sizeof keep_alive - 1));
  server.run_for(milliseconds(350));  // the grace ends: the first of the silent ones goes, and late comes in
  EXPECT_TRUE(closed_by_server(newer[0]));
  for (int fd : {newer.back(), late}) {
    char reply[64] = {};
    ASSERT_GT(recv(fd, reply, sizeof reply - 1, MSG_DONTWAIT), 0) << "scrapers whose request came late are answered";
    EXPECT_EQ(std::string(reply, 15), "HTTP/1.1 200 OK");
  }
}

// Four clients fill the table and a fifth waits to be accepted, having sent
// `sent` at its connect; the four then begin a request, so the fifth's last
// byte is the oldest when the table's grace ends. Closed: each of the five.
std::vector<bool> queued_behind_a_full_table(const std::string& sent, std::string* reply) {
  Loopback lo;
  SmallServer server(lo.listener);
  std::vector<int> table;
  for (int i = 0; i < 4; ++i) table.push_back(lo.connect_client());
  server.run_for(milliseconds(50));
  int queued = lo.connect_client();
  if (!sent.empty()) {
    EXPECT_EQ(send(queued, sent.data(), sent.size(), 0), static_cast<ssize_t>(sent.size()));
  }
  server.run_for(milliseconds(50));
  for (int fd : table) EXPECT_EQ(send(fd, "G", 1, 0), 1);  // a request begun: quiet from now
  server.run_for(milliseconds(450));  // their grace ends at 300 ms
  table.push_back(queued);
  std::vector<bool> closed;
  for (int fd : table) closed.push_back(closed_by_server(fd));
  char buf[64] = {};
  if (recv(queued, buf, sizeof buf - 1, MSG_DONTWAIT) > 0) *reply = buf;
  return closed;
}

// A flood queued ahead of a scrape has been quiet since its connect, not
// since its accept: one quiet longer than the table's clients goes first.
TEST(ConnectionGuard, TimeWaitingToBeAcceptedCountsAsQuiet) {
  std::string reply;
  EXPECT_EQ(queued_behind_a_full_table("", &reply), std::vector<bool>({false, false, false, false, true}));
}

// A scrape queued as long is not quiet: its request waits to be read.
TEST(ConnectionGuard, ARequestWaitingToBeReadIsNotQuiet) {
  std::string reply;
  std::vector<bool> closed = queued_behind_a_full_table("GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n", &reply);
  EXPECT_FALSE(closed.back());
  EXPECT_EQ(std::count(closed.begin(), closed.end(), true), 1) << "one of the table's four made room: "
                                                               << ::testing::PrintToString(closed);
  EXPECT_EQ(reply.substr(0, 15), "HTTP/1.1 200 OK");
}

}  // namespace
}  // namespace gpuenv
