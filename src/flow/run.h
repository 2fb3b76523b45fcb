// `gpuenv run`'s sequence (docs/feedback.md): the plan, the last verdict of
// this command, the tuning profile, then the command, watched (gpuenv stays
// its parent, records the job with its verdict and says it) or exec'd. Like
// flow/export.h, the sequence is handed what it reads and where it speaks
// (RunEnv), so a test runs it whole with fakes; cli/cmd_run.cc only parses
// the flags into a RunRequest. The store is read once before the job (its
// last job and profile: flow/command_history.h) and written once after it.
#pragma once

#include <sys/types.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "act/log.h"
#include "act/supervise.h"
#include "model/job.h"
#include "model/machine.h"
#include "model/plan.h"
#include "sense/nvml/job_watch.h"
#include "sense/python/python_hook.h"
#include "store/store.h"

namespace gpuenv::flow {

/// What `gpuenv run` was asked.
struct RunRequest {
  std::vector<std::string> argv;   // the command
  std::string store;               // the job store's path (--db, else gpuenv.db under the cache root)
  std::optional<std::string> tune; // --tune[=SPEC]: its value; nullopt when not given
  bool no_tune = false;            // --no-tune
  bool no_watch = false;           // --no-watch
  // The reads before the job (the last verdict, the tuning profile) wait for a store another
  // process holds no longer than this, which sensing's read shares: the job starts within
  // store::kStorePatience of gpuenv whatever the store does, at once when a stop signal is pending.
  store::Patience patience;
};

/// The environment variables the command gets, and the run's own (RANK,
/// GPUENV_WATCH, ...): this process's in a command (ProcessEnvironment).
class JobEnvironment {
 public:
  virtual ~JobEnvironment() = default;
  /// The variable's value; nullopt when unset.
  virtual std::optional<std::string> get(const std::string& name) const = 0;
  virtual void set(const std::string& name, const std::string& value) = 0;
  virtual void unset(const std::string& name) = 0;
};

/// Starts the command and waits for it (SupervisedSpawn: act/supervise.h).
class JobSpawn {
 public:
  virtual ~JobSpawn() = default;
  /// Runs argv with the JobEnvironment's variables, calls `on_start` once it
  /// runs, and returns how it ended; when it cannot start, code 126 or 127
  /// and *err says why.
  virtual ChildExit run(const std::vector<std::string>& argv, std::string* err,
                        const std::function<void(pid_t)>& on_start) = 0;
};

/// Watches the running job's GPUs and processes (NvmlJobWatcher:
/// sense/nvml/job_watch.h).
class JobWatcher {
 public:
  virtual ~JobWatcher() = default;
  virtual void start(JobWatchOptions options) = 0;
  /// What it saw (JobWatch::stop).
  virtual void stop(JobContext* context, Timeline* timeline, std::optional<std::int64_t>* peak_bytes) = 0;
};

/// What the sequence is handed: the real ones by default, fakes in a test.
struct RunEnv {
  /// This machine and the options its plan is decided with; false when the
  /// machine cannot be sensed (the reason already said).
  std::function<bool(Machine*, Options*)> sense;
  std::function<void(const Plan&)> warn = [](const Plan&) {};  // shows the plan's notes
  JobEnvironment* environment = nullptr;
  /// Made before sensing when the job is watched (a Supervisor holds the
  /// signals from then on), never for one exec'd.
  std::function<std::unique_ptr<JobSpawn>()> supervise;
  std::function<std::unique_ptr<JobWatcher>()> watch;
  /// Replaces this process with argv (--no-watch); returns only when that
  /// failed: 126 or 127, with *err.
  std::function<int(const std::vector<std::string>& argv, std::string* err)> exec;
  /// Pins this process to the plan's CPU binding (act/run.h: apply_binding).
  std::function<void(const Plan&, std::string* warning)> bind;
  std::function<double()> clock;             // steady seconds, the speed file's clock
  std::function<std::string()> utc_clock;    // RFC 3339 UTC: the job's start, the profile's update
  std::function<double()> unix_clock;        // seconds since the epoch: GPUENV_JOB_ID
  std::function<std::string()> cwd;          // the working directory: the command's fingerprint
  std::function<pid_t()> pid;                // this process: GPUENV_JOB_ID, the watched tree's root
  std::function<std::string()> speed_file;   // a private file for the hook's speed lines; "" none
  std::function<PythonHook()> python_hook;   // where the Python start-up hook is (python_hook.h)
  MessageSink log = log_message;             // every line the run says
};

/// The real RunEnv (this process's environment, a Supervisor, JobWatch,
/// execvp, the clocks) with `sense` and `warn`.
RunEnv process_run_env(std::function<bool(Machine*, Options*)> sense, std::function<void(const Plan&)> warn);

/// gpuenv run: the plan (`env.warn` shows its notes), the last verdict of
/// this command, the tuning, then the command: watched unless --no-watch or
/// GPUENV_WATCH=0, else exec'd. Returns the command's exit code, or gpuenv's
/// (model/exit_codes.h) when it could not run it.
int run_job(const RunRequest& request, const RunEnv& env);

}  // namespace gpuenv::flow
