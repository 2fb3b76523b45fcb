// One HTTP GET through libcurl, loaded at run time (libcurl.so.4) through
// the one dlopen home, sys/dynamic_library.h: gpuenv links no libcurl, so
// the binary runs where it is absent and only this call says so ("install
// libcurl4"). What gpuenv asks over HTTP is small JSON from a server the
// user named (`gpuenv report --prometheus URL`), so the call is bounded:
// a connect timeout, a total timeout, a cap on the answer's size, http and
// https only, and no redirect followed.
#pragma once

#include <cstddef>
#include <string>

namespace gpuenv::sys {

/// How one GET is bounded, and which library file does it.
struct HttpGetOptions {
  std::string library = "libcurl.so.4";  // dlopen'ed by name: the normal loader search
  long connect_timeout_ms = 5000;
  long total_timeout_ms = 30000;
  std::size_t max_bytes = std::size_t{64} << 20;  // a longer answer fails the call (64 MiB)
};

/// What the server answered: its status, whatever it is, and the body
/// (decompressed when it came gzip'ed).
struct HttpResponse {
  long status = 0;
  std::string content_type;  // "" when the server sent none
  std::string body;
};

/// GETs `url`. True when a whole answer came, whatever its status (a 3xx is
/// returned as it is, never followed). False with *err naming the URL and
/// what failed: libcurl missing ("... install libcurl4 (Debian, Ubuntu) or
/// libcurl (RHEL)"), a URL that is not http(s), no connection, a timeout,
/// an answer over max_bytes.
bool http_get(const std::string& url, const HttpGetOptions& options, HttpResponse* out, std::string* err);

}  // namespace gpuenv::sys
