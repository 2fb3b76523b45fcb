// `gpuenv bench`'s sequence (docs/bench.md): measure this machine's GPUs
// through the measuring engine's backend, show each figure beside its spec
// peak and keep it in the store; with --history, show the stored figures.
// Handed what it reads and where it speaks (BenchEnv), so a test runs it
// whole with a fake backend; cli/cmd_bench.cc only parses the flags into a
// BenchRequest.
#pragma once

#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "act/log.h"
#include "act/render/machine_report.h"
#include "flow/bench_session.h"
#include "model/machine.h"
#include "sense/nvml/nvml_sampler.h"
#include "sys/text.h"

namespace gpuenv::flow {

/// What `gpuenv bench` was asked: its flags, parsed.
struct BenchRequest {
  std::string sizes = "4096,8192";  // square GEMM sizes, as typed
  std::vector<std::string> only;    // case keys or key prefixes; empty: all
  std::vector<int> devices;         // CUDA ordinals; empty: all visible
  int trials = 10;
  bool json = false, history = false, no_store = false;
  std::string machine_file;  // --machine: with --history only, whose stored figures to show
};

/// What the sequence is handed: the real ones in a command, fakes in a test.
struct BenchEnv : SessionEnv {
  /// This machine (with --history and --machine, the snapshot's); false
  /// when it cannot be read (the reason already said).
  std::function<bool(Machine*)> sense;
};

/// Runs `gpuenv bench`. Exit status: kExitOk every case that ran was right
/// (--history: shown); kExitFailure a case was wrong or failed, the backend
/// cannot open or has no device chosen, or (--history) the store cannot be
/// read; kExitUsage bad --sizes or --trials, or --machine without
/// --history; kExitBadInput (--history) the machine cannot be read.
int run_bench(const BenchRequest& request, const BenchEnv& env);

}  // namespace gpuenv::flow
