// `gpuenv export` started for a test: listening on 127.0.0.1 at a port the
// kernel picks, against a scenario's stand-in GPUs, its port read from its
// listening line. The export tests (export_test, export_dcgm_test,
// export_pods_test, export_web_config_test) all start it through here.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "container_support.h"
#include "process.h"
#include "test_paths.h"
#include "wait_until.h"

namespace gpuenv::testing {

struct ExportStart {
  std::string scenario = "h200";
  /// After `export --listen 127.0.0.1:0`; `--interval 0.2` comes first
  /// unless they name an interval themselves.
  std::vector<std::string> flags;
  /// Over stand_in_env(scenario).
  std::map<std::string, std::string> env;
  /// The scheme of the listening line ("https" with a web config's TLS).
  std::string scheme = "http";
};

class ExportProcess {
 public:
  explicit ExportProcess(const ExportStart& s)
      : bg_(argv(s.flags), environment(s)), listening_("listening on " + s.scheme + "://127.0.0.1:") {
    if (!bg_.wait_for_log(listening_, 30000)) return;
    std::string log = bg_.log();
    port_ = std::atoi(log.c_str() + log.find(listening_) + listening_.size());
  }
  explicit ExportProcess(const std::string& scenario, std::vector<std::string> flags = {},
                         std::map<std::string, std::string> env = {})
      : ExportProcess(ExportStart{scenario, std::move(flags), std::move(env), "http"}) {}

  bool ready() const { return port_ > 0; }
  int port() const { return port_; }
  Background& process() { return bg_; }
  std::string log() const { return bg_.log(); }
  std::string url(const std::string& path, const std::string& scheme = "http") const {
    return scheme + "://127.0.0.1:" + std::to_string(port_) + path;
  }
  /// The /metrics body over plain HTTP; "" when it cannot be fetched.
  std::string scrape() const {
    ProcessResult r = run_process({"curl", "-sS", url("/metrics")}, {{}, "", 10000});
    return r.exit_code == 0 ? r.out : "";
  }
  /// Scrapes until `want` is (or, `present` false, is not) in the body, for
  /// up to kEventBound; the last body.
  std::string scrape_until(const std::string& want, bool present = true) const {
    std::string body;
    wait_until(
        [&] {
          body = scrape();
          return (body.find(want) != std::string::npos) == present;
        },
        kEventBound, std::chrono::milliseconds(100));
    return body;
  }
  /// The listening line itself ("" before it).
  std::string start_line() const {
    std::string log = bg_.log();
    std::size_t at = log.find(listening_);
    return at == std::string::npos ? "" : log.substr(at, log.find('\n', at) - at);
  }

 private:
  static std::vector<std::string> argv(const std::vector<std::string>& flags) {
    std::vector<std::string> a = {test_paths::gpuenv_bin(), "export", "--listen", "127.0.0.1:0"};
    if (std::find(flags.begin(), flags.end(), "--interval") == flags.end()) a.insert(a.end(), {"--interval", "0.2"});
    a.insert(a.end(), flags.begin(), flags.end());
    return a;
  }
  static std::map<std::string, std::string> environment(const ExportStart& s) {
    std::map<std::string, std::string> e = stand_in_env(s.scenario);
    for (const auto& [k, v] : s.env) e[k] = v;
    return e;
  }

  Background bg_;
  std::string listening_;
  int port_ = 0;
};

}  // namespace gpuenv::testing
