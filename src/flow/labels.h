// `gpuenv labels`' sequence (docs/cluster.md): Node Feature Discovery's
// local-source feature file. Each round senses what doctor senses, judges
// with doctor's checks, and replaces the file atomically; without --once it
// repeats every --interval seconds until a stop (SIGTERM or SIGINT), which
// ends it with status 0. With --namespace nvidia.com it writes GFD's labels
// too, unless GFD's own file sits beside it. Like flow/export.h, the
// sequence is handed what it senses, writes and waits on (LabelsEnv), so a
// test runs its rounds whole with fakes; cli/cmd_labels.cc only parses.
#pragma once

#include <sys/types.h>

#include <ctime>
#include <functional>
#include <string>

#include "act/log.h"
#include "model/machine.h"
#include "model/plan.h"
#include "sys/file_write.h"

namespace gpuenv::flow {

/// Where NFD's Helm chart mounts features.d.
inline constexpr const char* kDefaultFeaturesDir = "/etc/kubernetes/node-feature-discovery/features.d";

/// GFD's own label namespace, for --namespace.
inline constexpr const char* kNvidiaNamespace = "nvidia.com";

/// NFD's features.d: GPUENV_FEATURES_D, else kDefaultFeaturesDir.
std::string features_dir();

/// What `gpuenv labels` was asked: its flags, parsed.
struct LabelsRequest {
  std::string features_dir = kDefaultFeaturesDir;  // where GFD's file is looked for
  std::string output = std::string(kDefaultFeaturesDir) + "/gpuenv";  // "-": stdout
  bool output_given = false;  // --output: no features.d parent is needed
  bool once = false;          // one round, then exit
  bool json = false;          // one round as JSON on stdout
  int interval_s = 60;
  std::string ns = "gpuenv.dev";    // or kNvidiaNamespace
  std::string device_plugin_config;  // "": none
};

/// Between rounds: a stop ends the rounds (SignalStop below; a test's stops
/// after its rounds).
class StopWait {
 public:
  virtual ~StopWait() = default;
  /// Called once before the first round: a stop that comes from now on is
  /// held until wait() takes it.
  virtual void hold() = 0;
  /// Waits up to `seconds` for a stop; true when one came.
  virtual bool wait(int seconds) = 0;
};

/// SIGTERM and SIGINT: held blocked in the calling thread (threads it
/// starts later inherit the mask), taken by sigtimedwait.
class SignalStop : public StopWait {
 public:
  void hold() override;
  bool wait(int seconds) override;
};

/// What the sequence is handed: the real ones in a command, fakes in a test.
struct LabelsEnv {
  /// This machine, sensed afresh each round, and the options doctor's
  /// verdict is judged with; false when it cannot be sensed (the reason
  /// already said).
  std::function<bool(Machine*, Options*)> sense;
  /// Writes a round's file (sys::write_output: atomic, "-" is stdout).
  sys::WriteFile write = sys::write_output;
  StopWait* stop = nullptr;  // only the rounds without --once or --json wait on it
  std::function<std::time_t()> clock = [] { return std::time(nullptr); };  // the labels' expiry
  MessageSink log = log_message;  // every line the command says
};

/// Runs the rounds: one with --once or --json, else until env.stop says
/// stop. Returns the exit status: kExitOk written (or ended by a stop),
/// kExitFailure the file could not be written (a round in the loop is
/// tried again next round, unless the default features.d has no parent),
/// kExitBadInput the machine or --device-plugin-config could not be read.
int run_labels(const LabelsRequest& request, const LabelsEnv& env);

}  // namespace gpuenv::flow
