// Runs a program for end-to-end tests and captures what it did.
#pragma once

#include <sys/types.h>

#include <map>
#include <string>
#include <vector>
#include "test_paths.h"

namespace gpuenv::testing {

struct ProcessResult {
  int exit_code = -1;    // exit status, or -1 when killed
  int term_signal = 0;   // the signal that ended it, if any
  std::string out, err;
};

struct ProcessOptions {
  // Variables to set (on top of a clean base environment: PATH, HOME,
  // and nothing NVIDIA/CUDA-related from the test runner).
  std::map<std::string, std::string> env;
  std::string stdin_data;
  int timeout_ms = 20000;  // killed (SIGKILL) after this
};

/// Runs argv[0] (looked up on PATH) and waits for it.
ProcessResult run_process(const std::vector<std::string>& argv, const ProcessOptions& opts = {});

/// The gpuenv binary under test (GPUENV_BIN) with a stand-in NVML by
/// default: GPUENV_NVML_LIBRARY points at a library that does not exist,
/// so a test never reaches a real driver unless it says so; and
/// GPUENV_WATCH=0, so `gpuenv run` records no job unless the test says so.
ProcessResult run_gpuenv(const std::vector<std::string>& args, ProcessOptions opts = {});

/// tests/fake_nvml/scenarios/, where the stand-in libraries' scenarios are.
inline const std::string kScenarios = (test_paths::tests_dir() + "/fake_nvml/scenarios/");

/// The environment that makes gpuenv load the stand-in NVML and libcuda
/// (tests/fake_*) answering as scenario NAME (kScenarios + NAME + ".txt").
std::map<std::string, std::string> stand_in_env(const std::string& scenario);

/// ProcessOptions with stand_in_env(scenario).
ProcessOptions stand_ins(const std::string& scenario);

/// A fresh directory /tmp/PREFIX-XXXXXX with `mode`, removed when the test
/// process exits.
std::string make_temp_dir(const std::string& prefix, mode_t mode = 0700);

/// Writes a file under a fresh temp dir and returns its path.
std::string write_temp_file(const std::string& name, const std::string& content);

/// One HTTP exchange through curl: its exit code, and the status, headers and
/// body of the answer (status 0 when curl failed or the answer had no headers).
struct HttpReply {
  int curl_exit = -1, status = 0;
  std::string headers, body;
};

/// `curl -sS -D - ARGS`, the process given `timeout_ms`.
HttpReply curl_http(const std::vector<std::string>& args, int timeout_ms = 10000);

/// How many series `query` (PromQL) returns from the Prometheus serving on
/// 127.0.0.1:`port` (its HTTP API, through curl), or -1 when it does not answer.
int series_count(int port, const std::string& query);

}  // namespace gpuenv::testing
