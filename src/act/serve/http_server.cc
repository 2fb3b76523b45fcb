#include "act/serve/http_server.h"

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

#include <algorithm>
#include <charconv>
#include <memory>
#include <string>

#include "act/serve/basic_auth.h"
#include "act/serve/http_server_limits.h"
#include "act/serve/tls_server.h"
#include "sys/fs.h"
#include "sys/signals.h"

namespace gpuenv {
namespace {

constexpr int kTimeoutSeconds = 10;       // a client that sends nothing is dropped (and HttpLimits)
constexpr int kMaxHeaderBytes = 8192;     // a scrape's headers are ~200 bytes
constexpr int kBacklog = 1024;  // clients beyond the connection cap wait here, not in SYN retries

const char* reason_phrase(int status) {
  switch (status) {
    case 200:
      return "OK";
    case 401:
      return "Unauthorized";
    case 404:
      return "Not Found";
    default:
      return "Error";
  }
}

struct Served {
  const HttpHandler* handler;
  ConnectionGuard* guard;
  const HttpSecurity* security;
};

bool authorized(const Served& served, evhttp_request* req, const std::string& path) {
  BasicAuth* auth = served.security->auth;
  if (auth == nullptr || !auth->enabled()) return true;
  const auto& open = served.security->open_paths;
  if (std::find(open.begin(), open.end(), path) != open.end()) return true;
  return auth->allows(evhttp_find_header(evhttp_request_get_input_headers(req), "Authorization"));
}

const HttpResponse kUnauthorized{401, "text/plain; charset=utf-8", "Unauthorized\n"};

bufferevent* tls_connection(event_base* base, const void* tls) {
  return static_cast<const TlsServer*>(tls)->new_connection(base);
}

void on_request(evhttp_request* req, void* arg) {
  const auto* served = static_cast<const Served*>(arg);
  const HttpHandler* handler = served->handler;
  const evhttp_uri* uri = evhttp_request_get_evhttp_uri(req);
  const char* raw = uri != nullptr ? evhttp_uri_get_path(uri) : nullptr;
  const std::string path = raw != nullptr && *raw != '\0' ? raw : "/";
  bool allowed = authorized(*served, req, path);
  HttpResponse r = allowed ? (*handler)(path) : kUnauthorized;
  evkeyvalq* headers = evhttp_request_get_output_headers(req);
  if (!allowed) evhttp_add_header(headers, "WWW-Authenticate", "Basic");
  evhttp_add_header(headers, "X-Content-Type-Options", "nosniff");
  evhttp_add_header(headers, "Content-Type", r.content_type.c_str());
  // evhttp 2.1 would send a HEAD's body and leave out its length: the
  // length is the GET's (RFC 9110, 9.3.2), and no body goes out.
  if (evhttp_request_get_command(req) == EVHTTP_REQ_HEAD)
    evhttp_add_header(headers, "Content-Length", std::to_string(r.body.size()).c_str());
  else
    evbuffer_add(evhttp_request_get_output_buffer(req), r.body.data(), r.body.size());
  served->guard->answered(req);
  evhttp_send_reply(req, r.status, reason_phrase(r.status), nullptr);
}

void on_signal(evutil_socket_t, short, void* base) { event_base_loopbreak(static_cast<event_base*>(base)); }

void on_hangup(evutil_socket_t, short, void* hangup) {
  const auto& f = *static_cast<const std::function<void()>*>(hangup);
  if (f) f();
}

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

namespace {

bool split_host_port(std::string_view text, std::string_view* host, std::string_view* port, bool* bracketed) {
  *bracketed = text.starts_with('[');
  std::size_t colon = text.rfind(':');
  if (*bracketed) {
    std::size_t close = text.find(']');
    if (close == std::string_view::npos || close + 1 >= text.size() || text[close + 1] != ':') return false;
    *host = text.substr(1, close - 1);
    *port = text.substr(close + 2);
    return true;
  }
  if (colon == std::string_view::npos) return false;
  *host = text.substr(0, colon);
  *port = text.substr(colon + 1);
  return true;
}

}  // namespace

bool parse_listen_address(std::string_view text, ListenAddress* out, std::string* err) {
  const std::string want =
      "want HOST:PORT, HOST an IPv4 address, localhost, or an IPv6 one in brackets, or :PORT for every address "
      "(127.0.0.1:9400, [::1]:9400, :9400)";
  const std::string quoted = "--listen \"" + std::string(text) + "\": ";
  ListenAddress a;
  std::string_view host, port;
  if (!split_host_port(text, &host, &port, &a.ipv6)) return *err = quoted + want, false;
  a.host = std::string(host);
  if (!a.ipv6 && a.host.empty()) {
    a.host = "::";
    a.ipv6 = a.any = true;
  } else if (!a.ipv6 && a.host == "localhost") {
    a.host = "127.0.0.1";
  }
  unsigned char buf[sizeof(in6_addr)];
  if (a.host.find('\0') != std::string::npos || inet_pton(a.ipv6 ? AF_INET6 : AF_INET, a.host.c_str(), buf) != 1)
    return *err = quoted + "\"" + a.host + "\" is not an IP" + (a.ipv6 ? "v6" : "v4") + " address; " + want, false;
  if (!port_number(port, &a.port)) return *err = quoted + "the port must be 0-65535; " + want, false;
  *out = a;
  return true;
}

std::string format_listen_address(const ListenAddress& a) {
  if (a.any) return ":" + std::to_string(a.port);
  return (a.ipv6 ? "[" + a.host + "]" : a.host) + ":" + std::to_string(a.port);
}

namespace {

// One socket on `address`; `dual_stack` lets an IPv6 one take IPv4 too.
int listen_on(const ListenAddress& address, bool dual_stack, ListenAddress* bound, std::string* err) {
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
  int one = 1, v6only = dual_stack ? 0 : 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (address.ipv6) setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &v6only, sizeof v6only);
  // Accepted sockets inherit it: evhttp writes the head and the body apart,
  // and Nagle would hold the body for the client's delayed ACK.
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  const std::string name = format_listen_address(address);
  if (bind(fd, reinterpret_cast<sockaddr*>(&ss), len) != 0 || listen(fd, kBacklog) != 0) {
    int saved = errno;
    *err = fs::errno_text(errno == EADDRINUSE || errno == EADDRNOTAVAIL || errno == EACCES ? "bind" : "listen",
                          name);
    close(fd);
    errno = saved;
    return -1;
  }
  *bound = address;
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &len) == 0)
    bound->port = ntohs(address.ipv6 ? reinterpret_cast<sockaddr_in6*>(&ss)->sin6_port
                                     : reinterpret_cast<sockaddr_in*>(&ss)->sin_port);
  return fd;
}

}  // namespace

int listen_tcp(const ListenAddress& address, ListenAddress* bound, std::string* err) {
  if (!address.any) return listen_on(address, false, bound, err);
  int fd = listen_on(address, true, bound, err);
  if (fd < 0 && (errno == EAFNOSUPPORT || errno == EADDRNOTAVAIL)) {  // no IPv6 here: IPv4's every address
    ListenAddress v4 = address;
    v4.host = "0.0.0.0";
    v4.ipv6 = false;
    fd = listen_on(v4, false, bound, err);
  }
  return fd;
}

bool serve_http(int fd, const HttpHandler& handler, const std::function<void()>& ready,
                const std::function<void()>& hangup, std::string* err, const HttpSecurity& security) {
  std::unique_ptr<event_base, EventBaseFree> base(event_base_new());
  std::unique_ptr<ConnectionGuard> guard;  // outlives http: evhttp_free closes the connections it watches
  Served served{&handler, nullptr, &security};
  std::unique_ptr<evhttp, EvhttpFree> http(base ? evhttp_new(base.get()) : nullptr);
  if (!http) {
    close(fd);
    return *err = "libevent: cannot create the HTTP server", false;
  }
  evhttp_set_allowed_methods(http.get(), EVHTTP_REQ_GET | EVHTTP_REQ_HEAD);
  evhttp_set_timeout(http.get(), kTimeoutSeconds);
  evhttp_set_max_headers_size(http.get(), kMaxHeaderBytes);
  evhttp_set_max_body_size(http.get(), kMaxHeaderBytes);  // GET and HEAD carry none
  evhttp_bound_socket* bound = evhttp_accept_socket_with_handle(http.get(), fd);
  if (bound == nullptr) {
    close(fd);
    return *err = "libevent: cannot accept on the socket", false;
  }
  guard = std::make_unique<ConnectionGuard>(base.get(), http.get(), evhttp_bound_socket_get_listener(bound), HttpLimits{});
  served.guard = guard.get();
  if (security.tls) guard->set_connection_maker(tls_connection, security.tls);
  evhttp_set_gencb(http.get(), on_request, &served);
  std::unique_ptr<event, EventFree> term(evsignal_new(base.get(), SIGTERM, on_signal, base.get()));
  std::unique_ptr<event, EventFree> intr(evsignal_new(base.get(), SIGINT, on_signal, base.get()));
  std::unique_ptr<event, EventFree> hup(
      evsignal_new(base.get(), SIGHUP, on_hangup, const_cast<std::function<void()>*>(&hangup)));
  if (!term || !intr || !hup || event_add(term.get(), nullptr) != 0 || event_add(intr.get(), nullptr) != 0 ||
      event_add(hup.get(), nullptr) != 0) {
    guard->detach();
    return *err = "libevent: cannot handle SIGTERM, SIGINT and SIGHUP", false;
  }
  sys::unblock_signals({SIGTERM, SIGINT, SIGHUP});
  ready();
  event_base_dispatch(base.get());
  guard->detach();
  return true;
}

}  // namespace gpuenv
