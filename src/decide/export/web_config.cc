#include "decide/export/web_config.h"

#include <yaml.h>

#include <algorithm>
#include <array>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace gpuenv {
namespace {

constexpr std::array<std::string_view, 5> kClientAuthTypes = {
    "NoClientCert", "RequestClientCert", "RequireAnyClientCert", "VerifyClientCertIfGiven",
    "RequireAndVerifyClientCert"};
constexpr std::array<std::string_view, 4> kVersions = {"TLS10", "TLS11", "TLS12", "TLS13"};

struct Document {
  yaml_document_t doc;
  bool loaded = false;
  ~Document() {
    if (loaded) yaml_document_delete(&doc);
  }
};

bool load(std::string_view text, Document* d, std::string* err) {
  yaml_parser_t p;
  if (!yaml_parser_initialize(&p)) return *err = "libyaml: cannot start a parser", false;
  yaml_parser_set_input_string(&p, reinterpret_cast<const unsigned char*>(text.data()), text.size());
  bool ok = yaml_parser_load(&p, &d->doc) != 0;
  if (!ok)
    *err = "not YAML: " + std::string(p.problem ? p.problem : "a syntax error") + " at line " +
           std::to_string(p.problem_mark.line + 1);
  yaml_parser_delete(&p);
  d->loaded = ok;
  return ok;
}

std::string scalar(const yaml_node_t* n) {
  return std::string(reinterpret_cast<const char*>(n->data.scalar.value), n->data.scalar.length);
}

// A mapping's (key, value) pairs, keys scalars; false with *err.
using Pairs = std::vector<std::pair<std::string, yaml_node_t*>>;
bool pairs(yaml_document_t* doc, yaml_node_t* map, const std::string& where, Pairs* out, std::string* err) {
  if (map->type != YAML_MAPPING_NODE) return *err = where + " must be a mapping", false;
  for (yaml_node_pair_t* p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; ++p) {
    yaml_node_t* k = yaml_document_get_node(doc, p->key);
    yaml_node_t* v = yaml_document_get_node(doc, p->value);
    if (!k || !v || k->type != YAML_SCALAR_NODE) return *err = where + ": a key must be a plain word", false;
    std::string key = scalar(k);
    if (std::any_of(out->begin(), out->end(), [&](const auto& e) { return e.first == key; }))
      return *err = where + ": " + key + " is given twice", false;
    out->emplace_back(key, v);
  }
  return true;
}

bool text_value(yaml_node_t* v, const std::string& key, std::string* out, std::string* err) {
  if (v->type != YAML_SCALAR_NODE) return *err = key + " must be a string", false;
  *out = scalar(v);
  return true;
}

std::string relative_to(const std::string& dir, const std::string& path) {
  if (path.empty() || path.front() == '/' || dir.empty()) return path;
  return dir + "/" + path;
}

template <std::size_t N>
bool one_of(const std::string& v, const std::array<std::string_view, N>& allowed, const std::string& key,
            std::string* err) {
  if (std::find(allowed.begin(), allowed.end(), v) != allowed.end()) return true;
  std::string list;
  for (std::string_view a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
  return *err = key + " \"" + v + "\" is not one of " + list, false;
}

bool tls_key(const std::string& key, yaml_node_t* v, const std::string& dir, TlsServerConfig* t, std::string* err) {
  const std::string name = "tls_server_config." + key;
  static const std::array<std::string_view, 6> kKeys = {"cert_file", "key_file", "client_ca_file",
                                                         "client_auth_type", "min_version", "max_version"};
  if (std::find(kKeys.begin(), kKeys.end(), key) == kKeys.end())
    return *err = name + " is not supported by gpuenv (it reads cert_file, key_file, client_ca_file, "
                         "client_auth_type, min_version, max_version)",
           false;
  std::string s;
  if (!text_value(v, name, &s, err)) return false;
  if (key == "cert_file") t->cert_file = relative_to(dir, s);
  else if (key == "key_file") t->key_file = relative_to(dir, s);
  else if (key == "client_ca_file") t->client_ca_file = relative_to(dir, s);
  else if (key == "client_auth_type") t->client_auth_type = s;
  else if (key == "min_version") t->min_version = s;
  else t->max_version = s;
  return true;
}

bool check_tls(const TlsServerConfig& t, std::string* err) {
  if (t.cert_file.empty()) return *err = "tls_server_config needs cert_file", false;
  if (t.key_file.empty()) return *err = "tls_server_config needs key_file", false;
  if (!one_of(t.client_auth_type, kClientAuthTypes, "tls_server_config.client_auth_type", err)) return false;
  if (!one_of(t.min_version, kVersions, "tls_server_config.min_version", err)) return false;
  if (!t.max_version.empty() && !one_of(t.max_version, kVersions, "tls_server_config.max_version", err)) return false;
  if (!t.max_version.empty() && t.max_version < t.min_version)
    return *err = "tls_server_config.max_version is older than min_version", false;
  bool verifies = t.client_auth_type == "VerifyClientCertIfGiven" || t.client_auth_type == "RequireAndVerifyClientCert";
  if (verifies && t.client_ca_file.empty())
    return *err = "tls_server_config.client_auth_type " + t.client_auth_type + " needs client_ca_file", false;
  if (!t.client_ca_file.empty() && t.client_auth_type == "NoClientCert")
    return *err = "tls_server_config.client_ca_file is set but client_auth_type is NoClientCert; set one", false;
  return true;
}

bool parse_tls(yaml_document_t* doc, yaml_node_t* n, const std::string& dir, WebConfig* out, std::string* err) {
  Pairs ps;
  if (!pairs(doc, n, "tls_server_config", &ps, err)) return false;
  TlsServerConfig t;
  for (const auto& [key, v] : ps)
    if (!tls_key(key, v, dir, &t, err)) return false;
  if (!check_tls(t, err)) return false;
  out->tls = t;
  return true;
}

// bcrypt's modular crypt format: $2a$, $2b$ or $2y$, a two-digit cost
// 04-31, 53 characters of salt and hash.
bool bcrypt_hash(const std::string& h) {
  if (h.size() != 60 || h.compare(0, 2, "$2") != 0 || (h[2] != 'a' && h[2] != 'b' && h[2] != 'y') || h[3] != '$' ||
      h[6] != '$')
    return false;
  if (h[4] < '0' || h[4] > '3' || h[5] < '0' || h[5] > '9') return false;
  int cost = (h[4] - '0') * 10 + (h[5] - '0');
  return cost >= 4 && cost <= 31 && std::all_of(h.begin() + 7, h.end(), [](char c) {
           return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '/';
         });
}

bool parse_users(yaml_document_t* doc, yaml_node_t* n, WebConfig* out, std::string* err) {
  Pairs ps;
  if (!pairs(doc, n, "basic_auth_users", &ps, err)) return false;
  for (const auto& [user, v] : ps) {
    std::string hash;
    if (!text_value(v, "basic_auth_users." + user, &hash, err)) return false;
    if (user.empty() || user.find(':') != std::string::npos)
      return *err = "basic_auth_users: a user name must be non-empty and without ':'", false;
    if (!bcrypt_hash(hash))
      return *err = "basic_auth_users." + user + " is not a bcrypt hash ($2y$10$... from `htpasswd -nbBC 10 \"\" "
                    "PASSWORD`)",
             false;
    out->users[user] = hash;
  }
  return true;
}

bool parse_top(yaml_document_t* doc, const std::string& dir, WebConfig* out, std::string* err) {
  yaml_node_t* root = yaml_document_get_root_node(doc);
  if (!root || (root->type == YAML_SCALAR_NODE && root->data.scalar.length == 0)) return true;  // empty: no TLS, no auth
  Pairs ps;
  if (!pairs(doc, root, "the file", &ps, err)) return false;
  for (const auto& [key, v] : ps) {
    bool ok = key == "tls_server_config"  ? parse_tls(doc, v, dir, out, err)
              : key == "basic_auth_users" ? parse_users(doc, v, out, err)
                                          : (*err = key + " is not supported by gpuenv (it reads tls_server_config "
                                                          "and basic_auth_users)",
                                             false);
    if (!ok) return false;
  }
  return true;
}

}  // namespace

bool parse_web_config(std::string_view yaml, const std::string& dir, WebConfig* out, std::string* err) {
  Document d;
  if (!load(yaml, &d, err)) return false;
  WebConfig c;
  if (!parse_top(&d.doc, dir, &c, err)) return false;
  *out = std::move(c);
  return true;
}

}  // namespace gpuenv
