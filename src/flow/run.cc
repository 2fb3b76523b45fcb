#include "flow/run.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "act/render/machine_report.h"
#include "act/run.h"
#include "decide/decide.h"
#include "decide/launcher_env.h"
#include "decide/rules/rule_measured.h"
#include "decide/run/job_run.h"
#include "decide/run/peak_memory.h"
#include "decide/run/precision_tune.h"
#include "decide/run/python_flags.h"
#include "decide/run/run_profile.h"
#include "decide/run/tune.h"
#include "decide/run/tune_search.h"
#include "decide/verdict.h"
#include "flow/command_history.h"
#include "flow/export_jobs.h"
#include "model/exit_codes.h"
#include "model/json_text.h"
#include "sense/nvml/nvml_sampler.h"
#include "sense/python/speed_report.h"
#include "store/fingerprint.h"
#include "sys/fs.h"
#include "sys/text.h"

namespace gpuenv::flow {
namespace {

void say(const RunEnv& env, Severity level, const char* event, const std::string& text) {
  env.log(level, event, text, nlohmann::ordered_json::object());
}

void say_error(const RunEnv& env, const std::string& text) { say(env, Severity::kError, "error", text); }

// The variable's value, "" when unset.
std::string var(const RunEnv& env, const char* name) { return env.environment->get(name).value_or(""); }

std::optional<int> count(const RunEnv& env, const char* name, const char* fallback) {
  return launcher_count([&](const char* n) { return var(env, n); }, name, fallback);
}

std::optional<int> rank(const RunEnv& env) { return count(env, "RANK", "SLURM_PROCID"); }

bool regular_file(const std::string& p) {
  std::error_code ec;
  return std::filesystem::is_regular_file(p, ec);
}

// The run's state from the plan to the job's start.
struct Prepared {
  Machine m;
  Options o;
  Plan plan;
  std::string fp;             // the command's fingerprint, computed once
  std::optional<Job> last;    // the command's last job
  RunTuning tuning;
  std::string tuned;          // the settings handed to the hook, "" none
  std::string precision;      // "bf16" under --tune=+precision, "" none
};

// The job's exit status does not wait long for the record: a store another process holds gets
// store::kStorePatience, shared by the record and the tuning profile, and none once a stop signal is
// pending (Store) or one ended the job (`stopped`: gpuenv passed it on).
store::Patience record_patience(bool stopped) { return {store::kStorePatience, [stopped] { return stopped; }}; }

// Why the job's Python will not load gpuenv's hook, "" when it may: a flag on its command line
// (decide/run/python_flags.h), or the user's empty PYTHONPATH that the plan keeps (rule tf32 says
// so in a note). The hook's variables are then left unset: it is the hook that removes them from
// the environment once read, so a variable its interpreter never read would reach the next Python
// the job starts (a helper's `python -c`) and be applied there instead.
std::string hook_blocked(const Plan& plan, const std::vector<std::string>& argv) {
  if (std::string by = python_hook_blocked_by(argv); !by.empty()) return by;
  const Setting* path = plan.find("PYTHONPATH");
  return path && path->origin == Origin::kKept && path->value.empty()
             ? "your PYTHONPATH is set empty, and gpuenv keeps it" : "";
}

// Puts gpuenv's Python hook first on PYTHONPATH; "" or why it could not. `blocked`: hook_blocked().
// `needs`: a module the caller's setting loads from beside sitecustomize.py.
std::string put_hook_on_path(const RunEnv& env, const std::string& blocked, const char* needs = nullptr) {
  if (!blocked.empty()) return "the job's Python will not load gpuenv's start-up hook: " + blocked;
  PythonHook hook = env.python_hook();
  if (!hook.refused.empty()) return "gpuenv's Python hook was left off PYTHONPATH: " + hook.refused;
  if (hook.dir.empty()) return "the Python hook (sitecustomize.py) is not beside gpuenv nor in $GPUENV_PYTHON_DIR";
  if (needs && !fs::exists(fs::join(hook.dir, needs)))
    return fs::join(hook.dir, needs) + " is missing (install it beside sitecustomize.py)";
  std::optional<std::string> old = env.environment->get("PYTHONPATH");
  env.environment->set("PYTHONPATH", prepend_pythonpath(hook.dir, old ? old->c_str() : nullptr));
  return "";
}

// Says what the run does with the profile, and hands the settings to the hook; the settings
// applied (job.tuned), "" when none.
std::string apply_tuning(const RunEnv& env, const RunTuning& t, const std::string& blocked) {
  if (!t.line.empty() && t.loud) say(env, Severity::kInfo, "tune", t.line);
  if (t.settings.empty()) return "";
  if (std::string why = put_hook_on_path(env, blocked); !why.empty()) {
    say_error(env, "--tune: " + why + "; running untuned");
    return "";
  }
  env.environment->set(kTuneVar, t.settings);
  return t.settings;
}

// --tune=+precision: bf16 autocast where the job's GPUs have bf16 (decide/run/precision_tune.h).
// "bf16" when applied, for the record; "" when refused (said).
std::string apply_precision(const RunEnv& env, const Prepared& p, const std::string& blocked) {
  if (std::string why = bf16_autocast_refusal(p.m, p.o); !why.empty()) {
    say_error(env, "--tune=+precision refused: " + why + "; the job runs in its own precision");
    return "";
  }
  if (std::string why = put_hook_on_path(env, blocked, kPrecisionHookFile); !why.empty()) {
    say_error(env, "--tune=+precision: " + why + "; no bf16 autocast: the job runs in its own precision");
    return "";
  }
  env.environment->set(kTunePrecisionVar, "bf16");
  say(env, Severity::kInfo, "tune", "--tune=+precision: the job's forward passes and losses run under bf16 autocast "
      "unless the script sets its own precision (docs/precision.md; refuse: --tune=-precision)");
  return "bf16";
}

// The TF32 rule puts the hook on PYTHONPATH for torch 2.9+'s two switches; a job whose Python
// will not load it (a flag of its command line) runs with the override alone. (The user's empty
// PYTHONPATH is the plan's own note.)
void say_tf32_without_hook(const RunEnv& env, const Plan& plan, const std::vector<std::string>& argv) {
  std::string by = python_hook_blocked_by(argv);
  const Setting* path = plan.find("PYTHONPATH");
  const Setting* tf32 = plan.find("TORCH_ALLOW_TF32_CUBLAS_OVERRIDE");
  if (by.empty() || !path || path->rule != "tf32" || !tf32 || tf32->value != "1") return;
  say(env, Severity::kWarning, "python hook",
      "the job's Python will not load gpuenv's start-up hook: " + by +
          "; TF32 stays on (TORCH_ALLOW_TF32_CUBLAS_OVERRIDE=1 needs no hook), but a torch 2.9+ script "
          "that sets torch.backends.cuda.matmul.fp32_precision may fail with \"mix of the legacy and new "
          "APIs\"");
}

void say_last_verdict(const RunEnv& env, const std::optional<Job>& last) {
  if (!last || !speaks_for_job(rank(env))) return;
  JobVerdict v = main_verdict(*last);
  say(env, Severity::kInfo, "last verdict",
      "last run of this command (job " + std::to_string(last->id) + ", " + last->started_at + "): " + v.name + ": " +
          v.evidence + "; fix: " + v.fix);
}

// GPUENV_JOB_ID: the job the exporter attributes this run's processes to
// (docs/metrics.md, "Jobs"), run-START-PID, unique on the host. One set
// already (an outer gpuenv run) is kept; torchrun's workers get none, so
// that their tree's root, torchrun, makes them one job.
void mark_job_id(const RunEnv& env) {
  if (env.environment->get("GPUENV_JOB_ID") || env.environment->get("TORCHELASTIC_RUN_ID")) return;
  env.environment->set("GPUENV_JOB_ID", "run-" + std::to_string(static_cast<long long>(env.unix_clock())) + "-" +
                                            std::to_string(env.pid()));
}

// The last verdict, the profile and the settings the job gets from them: one read of the store.
void prepare_tuning(const RunRequest& r, const RunEnv& env, const TuneChoice& choice, Prepared* p) {
  p->fp = command_fingerprint_in(r.argv, env.cwd());
  CommandHistory h = read_history(r.store, p->fp, rank(env), r.patience, env.log);
  p->last = std::move(h.last);
  say_last_verdict(env, p->last);
  p->tuning = choose_tuning(p->fp, h.profile, p->last, choice, r.no_tune);
  p->tuning.loud = speaks_for_job(rank(env));
  std::string blocked = hook_blocked(p->plan, r.argv);
  say_tf32_without_hook(env, p->plan, r.argv);
  p->tuned = apply_tuning(env, p->tuning, blocked);
  if (choice.enabled && choice.wants("precision")) p->precision = apply_precision(env, *p, blocked);
}

Job new_job(const RunEnv& env, const Prepared& p, const std::vector<std::string>& argv) {
  Job j;
  j.argv = argv;
  j.cwd = env.cwd();
  j.command_fp = p.fp;
  j.script_path = script_of(argv, regular_file);
  std::string content, err;
  if (!j.script_path.empty() && fs::read_file(j.script_path, &content, &err)) j.script_fp = store::text_fingerprint(content);
  j.machine_fp = store::fingerprint(p.m);
  j.plan_json = json_document(plan_json(p.plan));
  j.started_at = env.utc_clock();
  j.rank = rank(env);
  j.local_rank = count(env, "LOCAL_RANK", "SLURM_LOCALID");
  j.hostname = p.m.host.hostname.value_or("");
  j.gpuenv_version = GPUENV_VERSION;
  j.tuned = p.tuned;
  return j;
}

// What the record keeps about precision: whether it ran under --tune=+precision, and
// for the feedback that may suggest it, bf16 on its GPUs and this machine's measured gain.
void note_precision(const RunEnv& env, const Prepared& p, JobContext* c) {
  c->precision = p.precision;
  c->bf16 = bf16_autocast_refusal(p.m, p.o).empty();
  if (!c->bf16) return;
  bool tf32 = var(env, "TORCH_ALLOW_TF32_CUBLAS_OVERRIDE") == "1";
  if (auto gain = measured_bf16_gain(p.m, job_gpus(p.m, p.o), tf32))
    c->bf16_gain = gain->factor, c->bf16_gain_basis = gain->basis;
}

// The finished job, judged once: recorded with its verdict and the refined profile in one open
// of the store (the profile by rank 0's job only: the others apply what it chose), its verdict said.
void record(const RunRequest& r, const RunEnv& env, bool stopped, Job* job, RunTuning* t) {
  std::vector<Verdict> verdicts = judge(*job);
  job->verdict = to_job_verdict(verdicts[0]);
  std::string err;
  auto db = store::Store::open(r.store, &err, record_patience(stopped));
  if (!db || !db->add_job(*job, &job->id, &err)) {
    std::string why = stopped || stop_signal_pending() ? "a stop signal arrived (" + err + ")" : err;
    say_error(env, "the job's record was skipped, its exit status " + std::to_string(job->exit_code) +
                       " is passed on: " + why);
    return;
  }
  if (!speaks_for_job(job->rank)) return;  // one verdict line per job: rank 0's
  say(env, Severity::kInfo, "verdict",
      "job " + std::to_string(job->id) + ": " + verdicts[0].name + " (gpuenv report " + std::to_string(job->id) + ")");
  if (!t->profile) return;
  std::vector<std::string> notes = refine_profile(&*t->profile, tune_run(*job), verdicts);
  if (!db->put_profile(*t->profile, env.utc_clock(), &err)) return say_error(env, "the tuning profile was not updated: " + err);
  for (const auto& n : notes) say(env, Severity::kInfo, "tune", "tuning profile: " + n);
}

JobWatchOptions watch_options(const RunEnv& env, const Prepared& p) {
  JobWatchOptions wo;
  if (std::string lib = var(env, "GPUENV_NVML_LIBRARY"); !lib.empty()) wo.nvml_library = lib;
  wo.uuids = job_gpus(p.m, p.o);
  wo.root = env.pid();
  wo.interval = watch_interval(var(env, "GPUENV_WATCH_INTERVAL_MS"));
  wo.on_unwatched = [log = env.log](const std::string& why) {
    log(Severity::kError, "error", "the job runs unwatched: " + why, nlohmann::ordered_json::object());
  };
  return wo;
}

// The hook's speed lines: the job's own speed, under --tune what the hook applied, not what it was
// handed, and on every watched run the settings the script passes itself, which stay the script's
// (issue 40: the first verdict's fix then knows --tune cannot change them).
void read_speed(const std::string& file, double start, double end, Job* job, std::optional<std::int64_t>* torch_peak) {
  if (file.empty()) return;
  auto marks = read_speed_report(file);
  if (!marks) return;
  job->speed = job_speed(*marks, start, end);
  *torch_peak = marks->peak_mem;
  if (!job->tuned.empty() && marks->tuned) job->tuned = *marks->tuned;
  job->context.script_settings = marks->yours;
}

int supervise_watched(const RunRequest& r, const RunEnv& env, JobSpawn* spawn, Prepared* p) {
  Job job = new_job(env, *p, r.argv);
  // The job's own speed: the hook on PYTHONPATH, told where to write.
  std::string speed_file = env.speed_file();
  if (!speed_file.empty() && put_hook_on_path(env, hook_blocked(p->plan, r.argv)).empty())
    env.environment->set(kSpeedFileVar, speed_file);
  std::unique_ptr<JobWatcher> watch = env.watch();
  JobWatchOptions wo = watch_options(env, *p);
  double start = env.clock();
  std::string err;
  ChildExit exit = spawn->run(r.argv, &err, [&](pid_t) { watch->start(wo); });
  double end = env.clock();
  job.duration_s = end - start;
  std::optional<std::int64_t> nvml_peak, torch_peak;
  watch->stop(&job.context, &job.timeline, &nvml_peak);
  read_speed(speed_file, start, end, &job, &torch_peak);
  job.peak_memory = job_peak_memory(torch_peak, nvml_peak);
  if (!exit.started) return say_error(env, err), exit.code;
  job.exit_code = exit.code;
  job.context.cpus_per_gpu = cpus_per_gpu(p->m, p->plan, p->o);
  if (!wo.uuids.empty()) job.context.gemm_tflops = measured_gemm_tflops(p->m, wo.uuids[0]);
  note_precision(env, *p, &job.context);
  record(r, env, exit.stop_forwarded, &job, &p->tuning);
  return exit.code;
}

// The process's own environment.
class ProcessEnvironment : public JobEnvironment {
 public:
  std::optional<std::string> get(const std::string& name) const override {
    const char* v = std::getenv(name.c_str());
    return v ? std::optional<std::string>(v) : std::nullopt;
  }
  void set(const std::string& name, const std::string& value) override { setenv(name.c_str(), value.c_str(), 1); }
  void unset(const std::string& name) override { unsetenv(name.c_str()); }
};

class SupervisedSpawn : public JobSpawn {
 public:
  ChildExit run(const std::vector<std::string>& argv, std::string* err,
                const std::function<void(pid_t)>& on_start) override {
    return supervisor_.run(argv, err, on_start);
  }

 private:
  Supervisor supervisor_;
};

class NvmlJobWatcher : public JobWatcher {
 public:
  void start(JobWatchOptions options) override { watch_.start(std::move(options)); }
  void stop(JobContext* context, Timeline* timeline, std::optional<std::int64_t>* peak_bytes) override {
    watch_.stop(context, timeline, peak_bytes);
  }

 private:
  JobWatch watch_;
};

// A private file for the hook's speed lines (sense/python/speed_report.h); "" when none could be made.
std::string make_speed_file() {
  const char* tmp = std::getenv("TMPDIR");
  std::string path = std::string(tmp && *tmp ? tmp : "/tmp") + "/gpuenv-speed-XXXXXX";
  int fd = mkstemp(path.data());
  if (fd < 0) return "";
  close(fd);
  return path;
}

std::string current_dir() {
  std::error_code ec;
  return std::filesystem::current_path(ec).string();
}

}  // namespace

RunEnv process_run_env(std::function<bool(Machine*, Options*)> sense, std::function<void(const Plan&)> warn) {
  static ProcessEnvironment environment;
  RunEnv e;
  e.sense = std::move(sense);
  e.warn = std::move(warn);
  e.environment = &environment;
  e.supervise = [] { return std::make_unique<SupervisedSpawn>(); };
  e.watch = [] { return std::make_unique<NvmlJobWatcher>(); };
  e.exec = exec_command;
  e.bind = apply_binding;
  e.clock = steady_seconds;
  e.utc_clock = [] { return utc_now(); };
  e.unix_clock = unix_seconds;
  e.cwd = current_dir;
  e.pid = getpid;
  e.speed_file = make_speed_file;
  e.python_hook = python_hook;
  return e;
}

int run_job(const RunRequest& r, const RunEnv& env) {
  TuneChoice choice;
  std::string err;
  if (!parse_tune(r.tune, var(env, kTuneSkipVar), &choice, &err, var(env, kTuneAddVar))) {
    say_error(env, err);
    return kExitUsage;
  }
  env.environment->unset(kTunePrecisionVar);  // only --tune=+precision sets it: never applied unasked
  std::unique_ptr<JobSpawn> spawn;
  if (watch_enabled(r.no_watch, var(env, "GPUENV_WATCH"))) spawn = env.supervise();  // before sensing can start a thread
  Prepared p;
  if (!env.sense(&p.m, &p.o)) return kExitBadInput;
  p.plan = decide(p.m, p.o);
  env.warn(p.plan);
  if (choice.enabled && r.no_tune) {
    say_error(env, "--tune and --no-tune: choose one");
    return kExitUsage;
  }
  prepare_tuning(r, env, choice, &p);
  mark_job_id(env);
  // The binding first, so that its warning is said before exec replaces us.
  std::string warning;
  env.bind(p.plan, &warning);
  if (!warning.empty()) say(env, Severity::kWarning, "cpu binding", warning);
  for (const Setting& s : p.plan.settings) env.environment->set(s.name, s.value);
  if (!spawn) {
    int code = env.exec(r.argv, &err);  // returns only when it fails
    say_error(env, err);
    return code;
  }
  return supervise_watched(r, env, spawn.get(), &p);
}

}  // namespace gpuenv::flow
