#include "act/http_server.h"

#include <arpa/inet.h>
#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <charconv>
#include <memory>

#include "sense/fs.h"

namespace gpuenv {
namespace {

constexpr int kTimeoutSeconds = 10;       // a client that sends nothing is dropped
constexpr int kMaxHeaderBytes = 8192;     // a scrape's headers are ~200 bytes
constexpr int kBacklog = 64;

const char* reason_phrase(int status) {
  switch (status) {
    case 200:
      return "OK";
    case 404:
      return "Not Found";
    default:
      return "Error";
  }
}

void on_request(evhttp_request* req, void* arg) {
  const auto* handler = static_cast<const HttpHandler*>(arg);
  const evhttp_uri* uri = evhttp_request_get_evhttp_uri(req);
  const char* path = uri != nullptr ? evhttp_uri_get_path(uri) : nullptr;
  HttpResponse r = (*handler)(path != nullptr && *path != '\0' ? path : "/");
  evhttp_add_header(evhttp_request_get_output_headers(req), "Content-Type", r.content_type.c_str());
  evbuffer* body = evhttp_request_get_output_buffer(req);
  evbuffer_add(body, r.body.data(), r.body.size());
  evhttp_send_reply(req, r.status, reason_phrase(r.status), nullptr);
}

void on_signal(evutil_socket_t, short, void* base) { event_base_loopbreak(static_cast<event_base*>(base)); }

bool port_number(std::string_view text, int* port) {
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), *port);
  return !text.empty() && ec == std::errc() && end == text.data() + text.size() && *port >= 0 && *port <= 65535;
}

struct EventBaseFree {
  void operator()(event_base* b) const { event_base_free(b); }
};
struct EvhttpFree {
  void operator()(evhttp* h) const { evhttp_free(h); }
};
struct EventFree {
  void operator()(event* e) const { event_free(e); }
};

}  // namespace

bool parse_listen_address(std::string_view text, ListenAddress* out, std::string* err) {
  const std::string want = "want HOST:PORT, HOST an IPv4 address or an IPv6 one in brackets (127.0.0.1:9400, [::1]:9400)";
  ListenAddress a;
  std::string_view host, port;
  if (text.starts_with('[')) {
    std::size_t close = text.find(']');
    if (close == std::string_view::npos || close + 1 >= text.size() || text[close + 1] != ':')
      return *err = "--listen \"" + std::string(text) + "\": " + want, false;
    host = text.substr(1, close - 1);
    port = text.substr(close + 2);
    a.ipv6 = true;
  } else {
    std::size_t colon = text.rfind(':');
    if (colon == std::string_view::npos) return *err = "--listen \"" + std::string(text) + "\": " + want, false;
    host = text.substr(0, colon);
    port = text.substr(colon + 1);
  }
  a.host = std::string(host);
  unsigned char buf[sizeof(in6_addr)];
  if (a.host.find('\0') != std::string::npos || inet_pton(a.ipv6 ? AF_INET6 : AF_INET, a.host.c_str(), buf) != 1)
    return *err = "--listen \"" + std::string(text) + "\": \"" + a.host + "\" is not an IP" +
                  (a.ipv6 ? "v6" : "v4") + " address; " + want,
           false;
  if (!port_number(port, &a.port))
    return *err = "--listen \"" + std::string(text) + "\": the port must be 0-65535; " + want, false;
  *out = a;
  return true;
}

std::string format_listen_address(const ListenAddress& a) {
  return (a.ipv6 ? "[" + a.host + "]" : a.host) + ":" + std::to_string(a.port);
}

int listen_tcp(const ListenAddress& address, ListenAddress* bound, std::string* err) {
  sockaddr_storage ss{};
  socklen_t len = 0;
  if (address.ipv6) {
    auto* s6 = reinterpret_cast<sockaddr_in6*>(&ss);
    s6->sin6_family = AF_INET6;
    s6->sin6_port = htons(static_cast<std::uint16_t>(address.port));
    inet_pton(AF_INET6, address.host.c_str(), &s6->sin6_addr);
    len = sizeof *s6;
  } else {
    auto* s4 = reinterpret_cast<sockaddr_in*>(&ss);
    s4->sin_family = AF_INET;
    s4->sin_port = htons(static_cast<std::uint16_t>(address.port));
    inet_pton(AF_INET, address.host.c_str(), &s4->sin_addr);
    len = sizeof *s4;
  }
  int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return *err = fs::errno_text("socket"), -1;
  int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (address.ipv6) setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
  // Accepted sockets inherit it: evhttp writes the head and the body apart,
  // and Nagle would hold the body for the client's delayed ACK (40 ms).
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  const std::string name = format_listen_address(address);
  if (bind(fd, reinterpret_cast<sockaddr*>(&ss), len) != 0 || listen(fd, kBacklog) != 0) {
    *err = fs::errno_text(errno == EADDRINUSE || errno == EADDRNOTAVAIL || errno == EACCES ? "bind" : "listen",
                          name);
    close(fd);
    return -1;
  }
  *bound = address;
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &len) == 0)
    bound->port = ntohs(address.ipv6 ? reinterpret_cast<sockaddr_in6*>(&ss)->sin6_port
                                     : reinterpret_cast<sockaddr_in*>(&ss)->sin_port);
  return fd;
}

bool serve_http(int fd, const HttpHandler& handler, const std::function<void()>& ready, std::string* err) {
  std::unique_ptr<event_base, EventBaseFree> base(event_base_new());
  std::unique_ptr<evhttp, EvhttpFree> http(base ? evhttp_new(base.get()) : nullptr);
  if (!http) {
    close(fd);
    return *err = "libevent: cannot create the HTTP server", false;
  }
  evhttp_set_allowed_methods(http.get(), EVHTTP_REQ_GET | EVHTTP_REQ_HEAD);
  evhttp_set_timeout(http.get(), kTimeoutSeconds);
  evhttp_set_max_headers_size(http.get(), kMaxHeaderBytes);
  evhttp_set_max_body_size(http.get(), kMaxHeaderBytes);  // GET and HEAD carry none
  evhttp_set_gencb(http.get(), on_request, const_cast<HttpHandler*>(&handler));
  if (evhttp_accept_socket_with_handle(http.get(), fd) == nullptr) {
    close(fd);
    return *err = "libevent: cannot accept on the socket", false;
  }
  std::unique_ptr<event, EventFree> term(evsignal_new(base.get(), SIGTERM, on_signal, base.get()));
  std::unique_ptr<event, EventFree> intr(evsignal_new(base.get(), SIGINT, on_signal, base.get()));
  if (!term || !intr || event_add(term.get(), nullptr) != 0 || event_add(intr.get(), nullptr) != 0)
    return *err = "libevent: cannot handle SIGTERM and SIGINT", false;
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGTERM);
  sigaddset(&stop, SIGINT);
  pthread_sigmask(SIG_UNBLOCK, &stop, nullptr);
  ready();
  event_base_dispatch(base.get());
  return true;
}

}  // namespace gpuenv
