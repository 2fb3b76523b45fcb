// The exporter's HTTP server: libevent's evhttp (Debian's libevent-dev,
// linked statically in the portable build) parses the requests; this file
// binds the socket, maps a path to a response, and stops on SIGTERM/SIGINT.
#pragma once

#include <functional>
#include <string>
#include <string_view>

namespace gpuenv {

/// HOST:PORT to listen on: an IPv4 address, or an IPv6 one in brackets.
struct ListenAddress {
  std::string host;  // "127.0.0.1", "::1" (no brackets)
  int port = 0;      // 0: the kernel picks a free one
  bool ipv6 = false;
};

/// Parses "127.0.0.1:9400" or "[::1]:9400". False with *err saying what
/// is wrong with `text` and what is wanted.
bool parse_listen_address(std::string_view text, ListenAddress* out, std::string* err);

/// "127.0.0.1:9400", "[::1]:9400".
std::string format_listen_address(const ListenAddress& a);

/// A listening TCP socket (non-blocking, close-on-exec) on `address`, its
/// real address (the port the kernel chose for 0) in *bound. -1 with *err
/// ("bind(127.0.0.1:9400): Address already in use") when it cannot.
int listen_tcp(const ListenAddress& address, ListenAddress* bound, std::string* err);

struct HttpResponse {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
};

/// Answers a GET or HEAD of `path` (the URL's path, without the query).
using HttpHandler = std::function<HttpResponse(const std::string& path)>;

/// Serves GET and HEAD on `fd` (from listen_tcp, which it then owns) until
/// SIGTERM or SIGINT, then returns true. SIGTERM and SIGINT should be
/// blocked on entry (so that every other thread keeps them blocked): they
/// are unblocked here once they are handled, and `ready` runs then.
/// False with *err when libevent cannot start.
bool serve_http(int fd, const HttpHandler& handler, const std::function<void()>& ready, std::string* err);

}  // namespace gpuenv
