// The Prometheus exporter-toolkit web configuration file that `gpuenv
// export --web-config-file` reads, as dcgm-exporter and node_exporter read
// it (https://prometheus.io/docs/prometheus/latest/configuration/https/):
// TLS and basic auth. YAML through libyaml (Debian's libyaml-dev). Pure: the
// file is read by act/export_files.h's load_web_config.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace gpuenv {

/// tls_server_config. Paths relative to the file are made relative to its
/// directory, as the toolkit does.
struct TlsServerConfig {
  std::string cert_file, key_file;
  std::string client_ca_file;                     // "": no client certificates checked
  std::string client_auth_type = "NoClientCert";  // or RequestClientCert, RequireAnyClientCert,
                                                  // VerifyClientCertIfGiven, RequireAndVerifyClientCert
  std::string min_version = "TLS12", max_version;  // TLS10..TLS13; max "": the newest
};

struct WebConfig {
  std::optional<TlsServerConfig> tls;        // nullopt: plain HTTP
  std::map<std::string, std::string> users;  // basic_auth_users: name -> bcrypt hash; empty: no auth
};

/// Parses the file's text; `dir` is its directory, for relative paths.
/// Every key gpuenv does not act on is an error naming it, as the
/// toolkit's strict parse makes an unknown key one: a setting asked for is
/// never silently dropped. False with *err naming the key and what is
/// wanted.
bool parse_web_config(std::string_view yaml, const std::string& dir, WebConfig* out, std::string* err);

}  // namespace gpuenv
