// The exporter's HTTP server: libevent's evhttp (Debian's libevent-dev,
// linked statically in the portable build) parses the requests; this file
// binds the socket, maps a path to a response, and stops on SIGTERM/SIGINT.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace gpuenv {

/// HOST:PORT to listen on: an IPv4 address, or an IPv6 one in brackets;
/// or every address (":PORT").
struct ListenAddress {
  std::string host;  // "127.0.0.1", "::1" (no brackets); "::" or "0.0.0.0" for every address
  int port = 0;      // 0: the kernel picks a free one
  bool ipv6 = false;
  bool any = false;  // ":PORT": every IPv4 and IPv6 address (IPv4 only where IPv6 is off)
};

/// Parses "127.0.0.1:9400", "[::1]:9400", "localhost:9400" (127.0.0.1,
/// without asking DNS) or ":9400" (every address), as Go's net.Listen
/// takes them. False with *err saying what is wrong with `text` and what
/// is wanted.
bool parse_listen_address(std::string_view text, ListenAddress* out, std::string* err);

/// "127.0.0.1:9400", "[::1]:9400", ":9400".
std::string format_listen_address(const ListenAddress& a);

/// A listening TCP socket (non-blocking, close-on-exec) on `address`, its
/// real address (the port the kernel chose for 0) in *bound. Every address
/// is [::] taking IPv4 too, or 0.0.0.0 where the kernel has no IPv6. -1
/// with *err ("bind(127.0.0.1:9400): Address already in use") when it
/// cannot.
int listen_tcp(const ListenAddress& address, ListenAddress* bound, std::string* err);

struct HttpResponse {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
};

/// Answers a GET or HEAD of `path` (the URL's path, without the query).
using HttpHandler = std::function<HttpResponse(const std::string& path)>;

class BasicAuth;
class TlsServer;

/// What guards the server (from the web config, decide/export/web_config.h):
/// TLS on every connection, and basic auth on every path but `open_paths`.
struct HttpSecurity {
  const TlsServer* tls = nullptr;  // nullptr: plain HTTP
  BasicAuth* auth = nullptr;       // nullptr or none enabled: no auth
  std::vector<std::string> open_paths;  // answered without credentials (export's /health)
};

/// Serves GET and HEAD on `fd` (from listen_tcp, which it then owns) until
/// SIGTERM or SIGINT, then returns true. SIGTERM, SIGINT and SIGHUP should
/// be blocked on entry (so that every other thread keeps them blocked):
/// they are unblocked here once they are handled, and `ready` runs then.
/// SIGHUP runs `hangup` and serving goes on. Connections are held to
/// HttpLimits (act/serve/http_server_limits.h): at most connection_cap(64).
/// With `security.auth`, a request without a user and password it allows
/// gets 401 and `WWW-Authenticate: Basic`, its handler not asked. False with
/// *err when libevent cannot start.
bool serve_http(int fd, const HttpHandler& handler, const std::function<void()>& ready,
                const std::function<void()>& hangup, std::string* err, const HttpSecurity& security = {});

}  // namespace gpuenv
