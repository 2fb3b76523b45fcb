#include "act/serve/tls_server.h"

#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>
#include <openssl/err.h>
#include <openssl/ssl.h>

namespace gpuenv {
namespace {

std::string openssl_reason() {
  unsigned long e = ERR_get_error();
  ERR_clear_error();
  if (e == 0) return "no reason given";
  char buf[256];
  ERR_error_string_n(e, buf, sizeof buf);
  return buf;
}

int version(const std::string& v) {
  if (v == "TLS10") return TLS1_VERSION;
  if (v == "TLS11") return TLS1_1_VERSION;
  if (v == "TLS13") return TLS1_3_VERSION;
  return v.empty() ? 0 : TLS1_2_VERSION;
}

// RequestClientCert and RequireAnyClientCert take any certificate, as Go's do.
int accept_any(int, X509_STORE_CTX*) { return 1; }

bool client_auth(SSL_CTX* ctx, const TlsServerConfig& c, std::string* err) {
  const std::string& t = c.client_auth_type;
  if (!c.client_ca_file.empty()) {
    if (SSL_CTX_load_verify_locations(ctx, c.client_ca_file.c_str(), nullptr) != 1)
      return *err = "client_ca_file " + c.client_ca_file + ": " + openssl_reason(), false;
    SSL_CTX_set_client_CA_list(ctx, SSL_load_client_CA_file(c.client_ca_file.c_str()));
  }
  if (t == "RequestClientCert") SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, accept_any);
  if (t == "RequireAnyClientCert") SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, accept_any);
  if (t == "VerifyClientCertIfGiven") SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, nullptr);
  if (t == "RequireAndVerifyClientCert")
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, nullptr);
  return true;
}

bool configure(SSL_CTX* ctx, const TlsServerConfig& c, std::string* err) {
  if (SSL_CTX_use_certificate_chain_file(ctx, c.cert_file.c_str()) != 1)
    return *err = "cert_file " + c.cert_file + ": " + openssl_reason(), false;
  if (SSL_CTX_use_PrivateKey_file(ctx, c.key_file.c_str(), SSL_FILETYPE_PEM) != 1)
    return *err = "key_file " + c.key_file + ": " + openssl_reason(), false;
  if (SSL_CTX_check_private_key(ctx) != 1)
    return *err = "key_file " + c.key_file + " is not the key of cert_file " + c.cert_file + ": " + openssl_reason(),
           false;
  if (SSL_CTX_set_min_proto_version(ctx, version(c.min_version)) != 1 ||
      SSL_CTX_set_max_proto_version(ctx, version(c.max_version)) != 1)
    return *err = "min_version/max_version: " + openssl_reason(), false;
  SSL_CTX_set_options(ctx, SSL_OP_NO_RENEGOTIATION | SSL_OP_CIPHER_SERVER_PREFERENCE);
  return client_auth(ctx, c, err);
}

}  // namespace

std::unique_ptr<TlsServer> TlsServer::create(const TlsServerConfig& config, std::string* err) {
  SSL_CTX* ctx = SSL_CTX_new(TLS_server_method());
  if (ctx == nullptr) return *err = "OpenSSL: cannot make a TLS context: " + openssl_reason(), nullptr;
  std::unique_ptr<TlsServer> t(new TlsServer(ctx));
  if (!configure(ctx, config, err)) return *err = "tls_server_config: " + *err, nullptr;
  return t;
}

TlsServer::~TlsServer() { SSL_CTX_free(ctx_); }

bufferevent* TlsServer::new_connection(event_base* base) const {
  SSL* ssl = SSL_new(ctx_);
  if (ssl == nullptr) return nullptr;
  bufferevent* bev = bufferevent_openssl_socket_new(base, -1, ssl, BUFFEREVENT_SSL_ACCEPTING, BEV_OPT_CLOSE_ON_FREE);
  if (bev == nullptr) {
    SSL_free(ssl);
    return nullptr;
  }
  bufferevent_openssl_set_allow_dirty_shutdown(bev, 1);  // a scraper that just closes is no error
  return bev;
}

}  // namespace gpuenv
