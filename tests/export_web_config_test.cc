// gpuenv export as an operator configures dcgm-exporter (docs/metrics.md):
// a web config with TLS and basic auth (scraped with curl over TLS against
// a CA made here, and by a real Prometheus with tls_config and
// basic_auth), /health, a counters CSV (-f) and the hostname label's name.
#include <crypt.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <thread>

#include "container_support.h"
#include "export_process.h"
#include "process.h"
#include "test_paths.h"
#include "wait_until.h"

namespace gpuenv::testing {
namespace {

constexpr const char* kPassword = "s3cret";

// A CA and a server certificate for 127.0.0.1 signed by it, made by the
// openssl CLI in `dir`; and the exporter's web config naming them
// (relative to the config's own directory) and user prom.
class Pki {
 public:
  Pki() {
    run({"openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
         "-keyout", at("ca.key"), "-out", at("ca.crt"), "-days", "2", "-subj", "/CN=gpuenv test CA"});
    run({"openssl", "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout",
         at("server.key"), "-out", at("server.csr"), "-subj", "/CN=localhost"});
    dir_.file("san.ext", "subjectAltName=IP:127.0.0.1,DNS:localhost\n");
    run({"openssl", "x509", "-req", "-in", at("server.csr"), "-CA", at("ca.crt"), "-CAkey", at("ca.key"),
         "-CAcreateserial", "-out", at("server.crt"), "-days", "2", "-extfile", at("san.ext")});
  }
  std::string at(const std::string& name) const { return dir_.path() + "/" + name; }
  std::string web_config(const std::string& extra = "") const {
    auto data = std::make_unique<crypt_data>();
    std::string hash = crypt_r(kPassword, "$2y$04$abcdefghijklmnopqrstuu", data.get());
    return dir_.file("web.yml", "tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n" + extra +
                                    "basic_auth_users:\n  prom: '" + hash + "'\n");
  }
  const ScratchDir& dir() const { return dir_; }
  bool ok() const { return ok_; }

 private:
  void run(const std::vector<std::string>& argv) {
    ProcessResult r = run_process(argv, {{}, "", 30000});
    if (r.exit_code != 0) ok_ = false, ADD_FAILURE() << argv[0] << " " << argv[1] << ": " << r.err;
  }
  ScratchDir dir_;
  bool ok_ = true;
};

// The exporter on the stand-in H200×8 of node-7 with `flags`, listening with `scheme`.
ExportStart web(std::vector<std::string> flags, const std::string& scheme) {
  return {"h200_8_busy", std::move(flags), {{"NODE_NAME", "node-7"}}, scheme};
}

HttpReply curl(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {"--max-time", "10"};
  argv.insert(argv.end(), args.begin(), args.end());
  return curl_http(argv, 15000);
}

TEST(ExportWebConfig, ServesHttpsWithBasicAuthAndRefusesPlaintext) {
  Pki pki;
  ASSERT_TRUE(pki.ok());
  ExportProcess e(web({"--web-config-file", pki.web_config()}, "https"));
  ASSERT_GT(e.port(), 0) << e.log();
  EXPECT_NE(e.log().find(", basic auth"), std::string::npos) << e.log();
  const std::string ca = pki.at("ca.crt"), metrics = e.url("/metrics", "https");

  HttpReply good = curl({"--cacert", ca, "-u", std::string("prom:") + kPassword, metrics});
  EXPECT_EQ(good.status, 200);
  EXPECT_NE(good.body.find("DCGM_FI_DEV_GPU_TEMP{gpu=\"0\""), std::string::npos);
  EXPECT_NE(good.body.find("hostname=\"node-7\""), std::string::npos);  // dcgm-exporter 4.x's name by default

  for (const std::vector<std::string>& who : {std::vector<std::string>{"-u", "prom:wrong"},
                                              std::vector<std::string>{"-u", std::string("alice:") + kPassword},
                                              std::vector<std::string>{}}) {
    std::vector<std::string> args = {"--cacert", ca};
    args.insert(args.end(), who.begin(), who.end());
    args.push_back(metrics);
    HttpReply r = curl(args);
    EXPECT_EQ(r.status, 401) << (who.empty() ? "no credentials" : who[1]);
    EXPECT_NE(r.headers.find("WWW-Authenticate: Basic"), std::string::npos) << r.headers;
    EXPECT_EQ(r.body.find("DCGM_FI"), std::string::npos);
  }

  HttpReply health = curl({"--cacert", ca, e.url("/health", "https")});  // no credentials: a kubelet probe's
  EXPECT_EQ(health.status, 200);
  EXPECT_EQ(health.body, "KO");

  HttpReply plain = curl({e.url("/metrics", "http")});
  EXPECT_NE(plain.curl_exit, 0);
  EXPECT_EQ(plain.status, 0);
  HttpReply untrusted = curl({"-u", std::string("prom:") + kPassword, metrics});  // the system's CAs: not ours
  EXPECT_EQ(untrusted.curl_exit, 60);  // CURLE_PEER_FAILED_VERIFICATION: a real certificate check
}

TEST(ExportWebConfig, ABadWebConfigExitsThreeBeforeServing) {
  Pki pki;
  ASSERT_TRUE(pki.ok());
  const std::string web = pki.dir().file("bad.yml", "tls_server_config:\n  cert_file: server.crt\n  key_file: none.key\n");
  ProcessResult r = run_gpuenv({"export", "--listen", "127.0.0.1:0", "--web-config-file", web}, stand_ins("h200_8_busy"));
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.err.find("--web-config-file " + web + ": tls_server_config: key_file " + pki.at("none.key")),
            std::string::npos)
      << r.err;
  EXPECT_EQ(r.err.find("listening"), std::string::npos);
  const std::string cert_as_key =
      pki.dir().file("mixed.yml", "tls_server_config:\n  cert_file: server.crt\n  key_file: ca.key\n");
  r = run_gpuenv({"export", "--listen", "127.0.0.1:0", "--web-config-file", cert_as_key}, stand_ins("h200_8_busy"));
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.err.find("key_file " + pki.at("ca.key") + ": "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("key values mismatch"), std::string::npos) << r.err;  // OpenSSL's words
  r = run_gpuenv({"export", "--listen", "127.0.0.1:0", "--web-config-file", pki.dir().file("u.yml", "users: {}\n")},
                 stand_ins("h200_8_busy"));
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.err.find("users is not supported by gpuenv"), std::string::npos) << r.err;
}

TEST(ExportWebConfig, HealthIsDcgmExportersAnswerOverPlainHttpToo) {
  ExportProcess e(web({}, "http"));
  ASSERT_GT(e.port(), 0) << e.log();
  HttpReply health = curl({e.url("/health", "http")});
  EXPECT_EQ(health.status, 200);
  EXPECT_EQ(health.body, "KO");
  EXPECT_NE(health.headers.find("Content-Type: text/plain"), std::string::npos);
}

TEST(ExportCounters, ACountersCsvChoosesTheDcgmSeriesAndNamesWhatItCannotServe) {
  ScratchDir dir;
  const std::string csv = dir.file(
      "counters.csv",
      "# Format\n# DCGM FIELD, Prometheus metric type, help message\n\nDCGM_FI_DEV_GPU_TEMP, gauge, Temp here.\n"
      "DCGM_FI_DEV_FB_TOTAL, gauge, Framebuffer total.\nDCGM_FI_DEV_FAN_SPEED, gauge, Fan.\n");
  ExportProcess e(web({"-f", csv, "--hostname-label", "Hostname"}, "http"));
  ASSERT_GT(e.port(), 0) << e.log();
  EXPECT_NE(e.log().find("DCGM_FI_DEV_FAN_SPEED (line 6): not a field gpuenv serves"), std::string::npos) << e.log();
  HttpReply r = curl({e.url("/metrics", "http")});
  ASSERT_EQ(r.status, 200);
  std::set<std::string> dcgm;
  std::istringstream in(r.body);
  for (std::string line; std::getline(in, line);)
    if (line.rfind("DCGM_", 0) == 0) dcgm.insert(line.substr(0, line.find('{')));
  EXPECT_EQ(dcgm, (std::set<std::string>{"DCGM_FI_DEV_GPU_TEMP", "DCGM_FI_DEV_FB_TOTAL"}));  // FB_TOTAL: not a default
  EXPECT_NE(r.body.find("# HELP DCGM_FI_DEV_GPU_TEMP Temp here.\n"), std::string::npos);
  EXPECT_NE(r.body.find("Hostname=\"node-7\""), std::string::npos);
  EXPECT_EQ(r.body.find("DCGM_FI_DRIVER_VERSION="), std::string::npos);  // not listed as a label: none
}

TEST(ExportCounters, AMalformedCsvExitsThreeNamingTheLine) {
  ScratchDir dir;
  const std::string csv = dir.file("counters.csv", "# x\nDCGM_FI_DEV_GPU_TEMP gauge help\n");
  ProcessResult r = run_gpuenv({"export", "--listen", "127.0.0.1:0", "-f", csv}, stand_ins("h200_8_busy"));
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.err.find("-f " + csv + ": line 2: 1 fields, want 3: FIELD, TYPE, HELP"), std::string::npos) << r.err;
}

TEST(ExportWebConfig, ARealPrometheusScrapesItOverTlsWithBasicAuth) {
  ASSERT_EQ(access("/usr/bin/prometheus", X_OK), 0) << "no /usr/bin/prometheus: run `make deps`";
  Pki pki;
  ASSERT_TRUE(pki.ok());
  ExportProcess e(web({"--web-config-file", pki.web_config()}, "https"));
  ASSERT_GT(e.port(), 0) << e.log();
  const std::string password_file = pki.dir().file("password", kPassword);
  const std::string config = pki.dir().file(
      "prometheus.yml", "global:\n  scrape_interval: 1s\nscrape_configs:\n  - job_name: gpuenv\n    scheme: https\n"
                        "    tls_config:\n      ca_file: " + pki.at("ca.crt") + "\n    basic_auth:\n      username: prom\n"
                        "      password_file: " + password_file + "\n    static_configs:\n      - targets: ['127.0.0.1:" +
                        std::to_string(e.port()) + "']\n");
  int port = free_port();
  Background prom({"/usr/bin/prometheus", "--config.file=" + config, "--storage.tsdb.path=" + pki.at("data"),
                   "--web.listen-address=127.0.0.1:" + std::to_string(port), "--log.level=warn"},
                  {});
  EXPECT_TRUE(wait_until([&] { return series_count(port, "up{job=\"gpuenv\"} == 1") == 1; },
                         kEventBound, std::chrono::milliseconds(250)))
      << prom.log();
  EXPECT_TRUE(wait_until([&] { return series_count(port, "DCGM_FI_DEV_GPU_TEMP{hostname=\"node-7\"}") == 8; },
                         kEventBound, std::chrono::milliseconds(250)));
}

}  // namespace
}  // namespace gpuenv::testing
