// The exporter's TLS: an OpenSSL server context made from the web config's
// tls_server_config, and the libevent bufferevent (bufferevent_openssl,
// Debian's libevent-dev) that speaks TLS on each accepted connection.
#pragma once

#include <memory>
#include <string>

#include "decide/export/web_config.h"

struct bufferevent;
struct event_base;
typedef struct ssl_ctx_st SSL_CTX;

namespace gpuenv {

class TlsServer {
 public:
  /// Loads the certificate chain, the key (checked against the
  /// certificate), the client CAs and the versions; nullptr with *err
  /// naming the file and OpenSSL's reason.
  static std::unique_ptr<TlsServer> create(const TlsServerConfig& config, std::string* err);
  ~TlsServer();
  TlsServer(const TlsServer&) = delete;
  TlsServer& operator=(const TlsServer&) = delete;

  /// A bufferevent that accepts a TLS handshake on the socket evhttp will
  /// set (fd -1 until then); nullptr when OpenSSL cannot make a session.
  bufferevent* new_connection(event_base* base) const;

 private:
  explicit TlsServer(SSL_CTX* ctx) : ctx_(ctx) {}
  SSL_CTX* ctx_;
};

}  // namespace gpuenv
