// http_get through the real libcurl against a tiny HTTP server on loopback
// (a raw socket: tests of sys/ use sys/ alone): the body and status as they
// came, a redirect not followed, the size cap, refused connections, the
// timeout, and a libcurl that is missing or is not libcurl.
#include "sys/http_get.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

namespace gpuenv::sys {
namespace {

// Serves `answer` (a whole HTTP response; "" for none: it holds the
// connection open, saying nothing) to every connection until destroyed,
// and keeps each request's first line.
class TinyServer {
 public:
  explicit TinyServer(std::string answer) : answer_(std::move(answer)) {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    if (bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || listen(fd_, 8) != 0 ||
        getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len) != 0)
      ADD_FAILURE() << "cannot listen on loopback";
    port_ = ntohs(a.sin_port);
    thread_ = std::thread([this] { serve(); });
  }
  ~TinyServer() {
    stop_ = true;
    shutdown(fd_, SHUT_RDWR);
    thread_.join();
    close(fd_);
  }
  std::string url(const std::string& path = "/") const {
    return "http://127.0.0.1:" + std::to_string(port_) + path;
  }
  std::vector<std::string> requests() {
    std::lock_guard<std::mutex> lock(mu_);
    return requests_;
  }

 private:
  void serve() {
    while (!stop_) {
      int c = accept(fd_, nullptr, nullptr);
      if (c < 0) return;
      std::string req;
      char buf[4096];
      while (req.find("\r\n\r\n") == std::string::npos) {
        ssize_t n = read(c, buf, sizeof buf);
        if (n <= 0) break;
        req.append(buf, static_cast<std::size_t>(n));
      }
      {
        std::lock_guard<std::mutex> lock(mu_);
        requests_.push_back(req.substr(0, req.find("\r\n")));
      }
      if (answer_.empty()) {  // hold it until the client gives up
        while (read(c, buf, sizeof buf) > 0) {
        }
      } else {
        for (std::size_t at = 0; at < answer_.size();) {
          ssize_t n = write(c, answer_.data() + at, answer_.size() - at);
          if (n <= 0) break;
          at += static_cast<std::size_t>(n);
        }
      }
      close(c);
    }
  }

  std::string answer_;
  int fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::thread thread_;
  std::mutex mu_;
  std::vector<std::string> requests_;
};

std::string response(const std::string& status, const std::string& body, const std::string& extra = "") {
  return "HTTP/1.1 " + status + "\r\nContent-Type: application/json\r\nContent-Length: " +
         std::to_string(body.size()) + "\r\nConnection: close\r\n" + extra + "\r\n" + body;
}

TEST(HttpGet, ReturnsTheBodyStatusAndType) {
  TinyServer server(response("200 OK", R"({"status":"success"})"));
  HttpResponse r;
  std::string err;
  ASSERT_TRUE(http_get(server.url("/api/v1/query?query=up"), {}, &r, &err)) << err;
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, R"({"status":"success"})");
  EXPECT_EQ(r.content_type, "application/json");
  ASSERT_EQ(server.requests().size(), 1u);
  EXPECT_EQ(server.requests()[0], "GET /api/v1/query?query=up HTTP/1.1");
}

TEST(HttpGet, AnErrorStatusIsAnAnswer) {
  TinyServer server(response("400 Bad Request", R"({"status":"error","error":"parse error"})"));
  HttpResponse r;
  std::string err;
  ASSERT_TRUE(http_get(server.url(), {}, &r, &err)) << err;
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(r.body, R"({"status":"error","error":"parse error"})");
}

TEST(HttpGet, FollowsNoRedirect) {
  TinyServer server(response("302 Found", "", "Location: /elsewhere\r\n"));
  HttpResponse r;
  std::string err;
  ASSERT_TRUE(http_get(server.url("/here"), {}, &r, &err)) << err;
  EXPECT_EQ(r.status, 302);
  EXPECT_EQ(server.requests(), std::vector<std::string>{"GET /here HTTP/1.1"});
}

TEST(HttpGet, RefusesAnAnswerOverTheCap) {
  TinyServer server(response("200 OK", std::string(4096, 'x')));
  HttpGetOptions o;
  o.max_bytes = 1024;
  HttpResponse r;
  std::string err;
  EXPECT_FALSE(http_get(server.url(), o, &r, &err));
  EXPECT_EQ(err, "GET " + server.url() + ": the answer is over 1.0 KiB, the most gpuenv reads");
}

TEST(HttpGet, TakesALongAnswerUnderTheCap) {
  std::string body(3 << 20, 'y');
  TinyServer server(response("200 OK", body));
  HttpResponse r;
  std::string err;
  ASSERT_TRUE(http_get(server.url(), {}, &r, &err)) << err;
  EXPECT_EQ(r.body.size(), body.size());
}

TEST(HttpGet, ARefusedConnectionNamesTheUrl) {
  int port;
  {
    TinyServer gone(response("200 OK", ""));
    port = std::stoi(gone.url().substr(gone.url().rfind(':') + 1));
  }  // closed: nothing listens there now
  std::string url = "http://127.0.0.1:" + std::to_string(port) + "/api/v1/query";
  HttpResponse r;
  std::string err;
  EXPECT_FALSE(http_get(url, {}, &r, &err));
  EXPECT_EQ(err.rfind("GET " + url + ": ", 0), 0u) << err;
  EXPECT_NE(err.find("onnect"), std::string::npos) << err;  // "Couldn't connect", "Failed to connect"
}

TEST(HttpGet, GivesUpOnAServerThatSaysNothing) {
  TinyServer server("");
  HttpGetOptions o;
  o.total_timeout_ms = 300;
  HttpResponse r;
  std::string err;
  auto t0 = std::chrono::steady_clock::now();
  EXPECT_FALSE(http_get(server.url(), o, &r, &err));
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(20));
  EXPECT_NE(err.find("(gpuenv waits 5000 ms to connect and 300 ms in all)"), std::string::npos) << err;
}

TEST(HttpGet, OnlyHttpAndHttps) {
  HttpResponse r;
  std::string err;
  EXPECT_FALSE(http_get("file:///etc/passwd", {}, &r, &err));
  EXPECT_EQ(err.rfind("GET file:///etc/passwd: ", 0), 0u) << err;
  EXPECT_TRUE(r.body.empty());
}

TEST(HttpGet, AMissingLibcurlSaysWhatToInstall) {
  HttpGetOptions o;
  o.library = "/nonexistent/libcurl.so.4";
  HttpResponse r;
  std::string err;
  EXPECT_FALSE(http_get("http://127.0.0.1:9/", o, &r, &err));
  EXPECT_EQ(err.rfind("GET http://127.0.0.1:9/: libcurl is not here (", 0), 0u) << err;
  EXPECT_NE(err.find("install libcurl4 (Debian, Ubuntu)"), std::string::npos) << err;
}

TEST(HttpGet, ALibraryThatIsNotLibcurlIsSaid) {
  HttpGetOptions o;
  o.library = "libc.so.6";
  HttpResponse r;
  std::string err;
  EXPECT_FALSE(http_get("http://127.0.0.1:9/", o, &r, &err));
  EXPECT_NE(err.find("libc.so.6 has no curl_easy_init, so it is not libcurl"), std::string::npos) << err;
}

}  // namespace
}  // namespace gpuenv::sys
