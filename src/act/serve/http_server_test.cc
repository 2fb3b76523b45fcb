#include "act/serve/http_server.h"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

namespace gpuenv {
namespace {

TEST(ListenAddress, Parses) {
  struct Row {
    const char* text;
    std::string host;
    int port;
    bool ipv6;
  } rows[] = {
      {"127.0.0.1:9400", "127.0.0.1", 9400, false},
      {"0.0.0.0:0", "0.0.0.0", 0, false},
      {"[::1]:9400", "::1", 9400, true},
      {"[::]:65535", "::", 65535, true},
  };
  for (const Row& r : rows) {
    ListenAddress a;
    std::string err;
    ASSERT_TRUE(parse_listen_address(r.text, &a, &err)) << r.text << ": " << err;
    EXPECT_EQ(a.host, r.host) << r.text;
    EXPECT_EQ(a.port, r.port) << r.text;
    EXPECT_EQ(a.ipv6, r.ipv6) << r.text;
    EXPECT_EQ(format_listen_address(a), r.text);
  }
}

TEST(ListenAddress, RefusesWhatIsNotHostColonPort) {
  for (const char* bad : {"", "9400", "127.0.0.1", "127.0.0.1:", "127.0.0.1:99999", "127.0.0.1:-1",
                          "127.0.0.1:94x0", "gpu-node:9400", "::1:9400", "[::1]9400", "[::1]:",
                          "[127.0.0.1]:9400", "1.2.3:80", ":", ":x", "[]:9400", "[localhost]:9400"}) {
    ListenAddress a;
    std::string err;
    EXPECT_FALSE(parse_listen_address(bad, &a, &err)) << bad;
    EXPECT_NE(err.find(std::string("\"") + bad + "\""), std::string::npos) << err;  // names the value
    EXPECT_NE(err.find("[::1]:9400"), std::string::npos) << err;                  // and what is wanted
  }
}

TEST(ListenAddress, TakesGoStyleEveryAddressAndLocalhost) {
  ListenAddress a;
  std::string err;
  ASSERT_TRUE(parse_listen_address(":9400", &a, &err)) << err;
  EXPECT_TRUE(a.any);
  EXPECT_EQ(a.port, 9400);
  EXPECT_EQ(format_listen_address(a), ":9400");
  ASSERT_TRUE(parse_listen_address("localhost:9400", &a, &err)) << err;
  EXPECT_FALSE(a.any);
  EXPECT_EQ(format_listen_address(a), "127.0.0.1:9400");  // no DNS: loopback
}

TEST(ListenTcp, EveryAddressTakesIpv4Loopback) {
  ListenAddress any, bound;
  std::string err;
  ASSERT_TRUE(parse_listen_address(":0", &any, &err)) << err;
  int fd = listen_tcp(any, &bound, &err);
  ASSERT_GE(fd, 0) << err;
  EXPECT_TRUE(bound.any);
  EXPECT_GT(bound.port, 0);
  int c = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(static_cast<std::uint16_t>(bound.port));
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  EXPECT_EQ(connect(c, reinterpret_cast<sockaddr*>(&sa), sizeof sa), 0) << "127.0.0.1 not reached through " << bound.host;
  close(c);
  close(fd);
}

TEST(ListenTcp, PortZeroGetsAPortAndATakenPortSaysSo) {
  ListenAddress any{"127.0.0.1", 0, false}, bound, again;
  std::string err;
  int fd = listen_tcp(any, &bound, &err);
  ASSERT_GE(fd, 0) << err;
  EXPECT_GT(bound.port, 0);
  int nodelay = 0;
  socklen_t len = sizeof nodelay;  // accepted sockets inherit it (no 40 ms Nagle stall on keep-alive)
  ASSERT_EQ(getsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &nodelay, &len), 0);
  EXPECT_EQ(nodelay, 1);
  EXPECT_EQ(listen_tcp(bound, &again, &err), -1);
  EXPECT_EQ(err, "bind(127.0.0.1:" + std::to_string(bound.port) + "): Address already in use");
  close(fd);
}

}  // namespace
}  // namespace gpuenv

namespace gpuenv {
namespace {

TEST(ListenTcp, Ipv6Loopback) {
  ListenAddress any{"::1", 0, true}, bound;
  std::string err;
  int fd = listen_tcp(any, &bound, &err);
  if (fd < 0 && (err.find("Cannot assign requested address") != std::string::npos ||
                 err.find("Address family not supported") != std::string::npos))
    GTEST_SKIP() << "no IPv6 loopback here: " << err;
  ASSERT_GE(fd, 0) << err;
  EXPECT_GT(bound.port, 0);
  EXPECT_EQ(format_listen_address(bound), "[::1]:" + std::to_string(bound.port));
  close(fd);
}

}  // namespace
}  // namespace gpuenv
