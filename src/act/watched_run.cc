#include "act/watched_run.h"

#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <ctime>
#include <filesystem>

#include "act/log.h"
#include "act/render/feedback_report.h"
#include "act/render/machine_report.h"
#include "act/run.h"
#include "decide/run/run_profile.h"
#include "act/supervise.h"
#include "decide/run/tune.h"
#include "decide/decide.h"
#include "decide/run/job_run.h"
#include "decide/run/peak_memory.h"
#include "decide/run/python_flags.h"
#include "decide/launcher_env.h"
#include "decide/run/precision_tune.h"
#include "decide/rules/rule_measured.h"
#include "decide/run/tune_search.h"
#include "decide/verdict.h"
#include "model/exit_codes.h"
#include "sys/text.h"
#include "sense/nvml/job_watch.h"
#include "sense/python/python_hook.h"
#include "sense/python/speed_report.h"
#include "store/fingerprint.h"
#include "store/store.h"
#include "sys/env.h"
#include "sys/fs.h"

namespace gpuenv {
namespace {

std::string current_dir() {
  std::error_code ec;
  return std::filesystem::current_path(ec).string();
}

std::optional<int> env_int(const char* a, const char* b) {
  for (const char* name : {a, b})
    if (auto v = parse_count(env_or(name, ""))) return v;
  return std::nullopt;
}

bool regular_file(const std::string& p) {
  std::error_code ec;
  return std::filesystem::is_regular_file(p, ec);
}

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
std::string put_hook_on_path(const std::string& blocked, const char* needs = nullptr) {
  if (!blocked.empty()) return "the job's Python will not load gpuenv's start-up hook: " + blocked;
  PythonHook hook = python_hook();
  if (!hook.refused.empty()) return "gpuenv's Python hook was left off PYTHONPATH: " + hook.refused;
  if (hook.dir.empty()) return "the Python hook (sitecustomize.py) is not beside gpuenv nor in $GPUENV_PYTHON_DIR";
  if (needs && !fs::exists(fs::join(hook.dir, needs)))
    return fs::join(hook.dir, needs) + " is missing (install it beside sitecustomize.py)";
  setenv("PYTHONPATH", prepend_pythonpath(hook.dir, std::getenv("PYTHONPATH")).c_str(), 1);
  return "";
}

// Says what the run does with the profile, and hands the settings to the hook; the settings
// applied (job.tuned), "" when none.
std::string apply_tuning(const RunTuning& t, const std::string& blocked) {
  if (!t.line.empty() && t.loud) log_message(Severity::kInfo, "tune", t.line);
  if (t.settings.empty()) return "";
  if (std::string why = put_hook_on_path(blocked); !why.empty()) {
    print_error("--tune: " + why + "; running untuned");
    return "";
  }
  setenv(kTuneVar, t.settings.c_str(), 1);
  return t.settings;
}

// GPUENV_JOB_ID: the job the exporter attributes this run's processes to
// (docs/metrics.md, "Jobs"), run-START-PID, unique on the host. One set
// already (an outer gpuenv run) is kept; torchrun's workers get none, so
// that their tree's root, torchrun, makes them one job.
void mark_job_id() {
  if (std::getenv("GPUENV_JOB_ID") || std::getenv("TORCHELASTIC_RUN_ID")) return;
  long long start = std::chrono::duration_cast<std::chrono::seconds>(
                        std::chrono::system_clock::now().time_since_epoch()).count();
  setenv("GPUENV_JOB_ID", ("run-" + std::to_string(start) + "-" + std::to_string(getpid())).c_str(), 1);
}

// The finished job refines the profile (rank 0's job only: the others apply what it chose).
void refine_tuning(const std::string& store, const store::Patience& patience, const Job& job, RunTuning* t) {
  if (!t->profile || job.id == 0 || !speaks_for_job(job.rank)) return;
  std::vector<std::string> notes = refine_profile(&*t->profile, tune_run(job), judge(job));
  std::string err;
  auto db = store::Store::open(store, &err, patience);
  if (!db || !db->put_profile(*t->profile, utc_now(), &err)) {
    print_error("the tuning profile was not updated: " + err);
    return;
  }
  for (const auto& n : notes) log_message(Severity::kInfo, "tune", "tuning profile: " + n);
}

// A private file for the hook's speed lines (sense/python/speed_report.h); "" when none could be made.
std::string make_speed_file() {
  const char* tmp = std::getenv("TMPDIR");
  std::string path = std::string(tmp && *tmp ? tmp : "/tmp") + "/gpuenv-speed-XXXXXX";
  int fd = mkstemp(path.data());
  if (fd < 0) return "";
  close(fd);
  return path;
}

// --tune=+precision: bf16 autocast where the job's GPUs have bf16 (decide/run/precision_tune.h).
// "bf16" when applied, for the record; "" when refused (said).
std::string apply_precision(const Machine& m, const Options& o, const std::string& blocked) {
  if (std::string why = bf16_autocast_refusal(m, o); !why.empty()) {
    print_error("--tune=+precision refused: " + why + "; the job runs in its own precision");
    return "";
  }
  if (std::string why = put_hook_on_path(blocked, kPrecisionHookFile); !why.empty()) {
    print_error("--tune=+precision: " + why + "; no bf16 autocast: the job runs in its own precision");
    return "";
  }
  setenv(kTunePrecisionVar, "bf16", 1);
  log_message(Severity::kInfo, "tune", "--tune=+precision: the job's forward passes and losses run under bf16 autocast "
              "unless the script sets its own precision (docs/precision.md; refuse: --tune=-precision)");
  return "bf16";
}

// The TF32 rule puts the hook on PYTHONPATH for torch 2.9+'s two switches; a job whose Python
// will not load it (a flag of its command line) runs with the override alone. (The user's empty
// PYTHONPATH is the plan's own note.)
void say_tf32_without_hook(const Plan& plan, const std::vector<std::string>& argv) {
  std::string by = python_hook_blocked_by(argv);
  const Setting* path = plan.find("PYTHONPATH");
  const Setting* tf32 = plan.find("TORCH_ALLOW_TF32_CUBLAS_OVERRIDE");
  if (by.empty() || !path || path->rule != "tf32" || !tf32 || tf32->value != "1") return;
  log_message(Severity::kWarning, "python hook",
              "the job's Python will not load gpuenv's start-up hook: " + by +
                  "; TF32 stays on (TORCH_ALLOW_TF32_CUBLAS_OVERRIDE=1 needs no hook), but a torch 2.9+ script "
                  "that sets torch.backends.cuda.matmul.fp32_precision may fail with \"mix of the legacy and new "
                  "APIs\"");
}

void say_last_verdict(const std::optional<Job>& last) {
  if (!last || !speaks_for_job(env_int("RANK", "SLURM_PROCID"))) return;
  Verdict v = judge(*last)[0];
  log_message(Severity::kInfo, "last verdict", "last run of this command (job " + std::to_string(last->id) + ", " + last->started_at + "): " + v.name +
              ": " + v.evidence + "; fix: " + v.fix);
}

Job new_job(const Machine& m, const Plan& plan, const std::vector<std::string>& argv) {
  Job j;
  j.argv = argv;
  j.cwd = current_dir();
  j.command_fp = command_fingerprint_here(argv);
  j.script_path = script_of(argv, regular_file);
  std::string content, err;
  if (!j.script_path.empty() && fs::read_file(j.script_path, &content, &err)) j.script_fp = store::text_fingerprint(content);
  j.machine_fp = store::fingerprint(m);
  j.plan_json = plan_to_json(plan);
  j.started_at = utc_now();
  j.rank = env_int("RANK", "SLURM_PROCID");
  j.local_rank = env_int("LOCAL_RANK", "SLURM_LOCALID");
  j.hostname = m.host.hostname.value_or("");
  j.gpuenv_version = GPUENV_VERSION;
  return j;
}

void keep_job(const std::string& store, const store::Patience& patience, bool stopped, Job* job) {
  std::string err;
  auto db = store::Store::open(store, &err, patience);
  if (!db || !db->add_job(*job, &job->id, &err)) {
    std::string why = stopped || stop_signal_pending() ? "a stop signal arrived (" + err + ")" : err;
    print_error("the job's record was skipped, its exit status " + std::to_string(job->exit_code) +
                " is passed on: " + why);
    return;
  }
  if (!speaks_for_job(job->rank)) return;  // one verdict line per job: rank 0's
  Verdict v = judge(*job)[0];
  log_message(Severity::kInfo, "verdict", "job " + std::to_string(job->id) + ": " + v.name + " (gpuenv report " + std::to_string(job->id) + ")");
}

// What the record keeps about precision: whether it ran under --tune=+precision, and
// for the feedback that may suggest it, bf16 on its GPUs and this machine's measured gain.
void note_precision(const Machine& m, const Options& o, const std::string& applied, JobContext* c) {
  c->precision = applied;
  c->bf16 = bf16_autocast_refusal(m, o).empty();
  if (!c->bf16) return;
  bool tf32 = env_or("TORCH_ALLOW_TF32_CUBLAS_OVERRIDE", "") == "1";
  if (auto gain = measured_bf16_gain(m, job_gpus(m, o), tf32)) c->bf16_gain = gain->factor, c->bf16_gain_basis = gain->basis;
}

int supervise_watched(const RunRequest& r, Supervisor* supervisor, const Machine& m, const Plan& plan,
                      const Options& o, RunTuning* tuning, const std::string& tuned, const std::string& precision) {
  Job job = new_job(m, plan, r.argv);
  job.tuned = tuned;
  // The job's own speed: the hook on PYTHONPATH, told where to write.
  std::string speed_file = make_speed_file();
  if (!speed_file.empty() && put_hook_on_path(hook_blocked(plan, r.argv)).empty())
    setenv(kSpeedFileVar, speed_file.c_str(), 1);
  JobWatch watch;
  JobWatchOptions wo;
  wo.nvml_library = env_or("GPUENV_NVML_LIBRARY", wo.nvml_library);
  wo.uuids = job_gpus(m, o);
  wo.root = getpid();
  wo.interval = watch_interval(env_or("GPUENV_WATCH_INTERVAL_MS", ""));
  wo.on_unwatched = [](const std::string& why) { print_error("the job runs unwatched: " + why); };
  auto start = std::chrono::steady_clock::now();
  std::string err;
  ChildExit exit = supervisor->run(r.argv, &err, [&](pid_t) { watch.start(wo); });
  auto end = std::chrono::steady_clock::now();
  job.duration_s = std::chrono::duration<double>(end - start).count();
  std::optional<std::int64_t> nvml_peak, torch_peak;
  watch.stop(&job.context, &job.timeline, &nvml_peak);
  if (!speed_file.empty())
    if (auto marks = read_speed_report(speed_file)) {
      auto secs = [](std::chrono::steady_clock::time_point t) {
        return std::chrono::duration<double>(t.time_since_epoch()).count();
      };
      job.speed = job_speed(*marks, secs(start), secs(end));
      torch_peak = marks->peak_mem;
      // --tune: record what the hook applied, not what it was handed; the settings the
      // script passed itself stay the script's (issue 40; the tuner leaves them alone).
      if (!job.tuned.empty() && marks->tuned) job.tuned = *marks->tuned, job.context.script_settings = marks->yours;
    }
  job.peak_memory = job_peak_memory(torch_peak, nvml_peak);
  if (!exit.started) {
    print_error(err);
    return exit.code;
  }
  job.exit_code = exit.code;
  job.context.cpus_per_gpu = cpus_per_gpu(m, plan, o);
  if (!wo.uuids.empty()) job.context.gemm_tflops = measured_gemm_tflops(m, wo.uuids[0]);
  note_precision(m, o, precision, &job.context);
  store::Patience patience = record_patience(exit.stop_forwarded);
  keep_job(r.store, patience, exit.stop_forwarded, &job);
  refine_tuning(r.store, patience, job, tuning);
  return exit.code;
}

}  // namespace

std::string command_fingerprint_here(const std::vector<std::string>& argv) {
  return store::command_fingerprint(argv, current_dir());
}

bool record_planned_peak(const std::string& store, const std::vector<std::string>& command, PlannedPeak plan,
                         const store::Patience& patience, std::string* err) {
  plan.command_fp = command_fingerprint_here(command);
  plan.planned_at = utc_now();
  auto db = store::Store::open(store, err, patience);
  return db && db->add_planned_peak(plan, err);
}

std::optional<Job> last_job(const std::string& store, const std::vector<std::string>& argv,
                            const store::Patience& patience) {
  std::string err;
  auto db = store::Store::open_existing(store, &err, patience);
  std::optional<Job> job;
  if (db) {
    if (argv.empty()) {
      std::vector<Job> jobs;
      if (db->recent_jobs(1, &jobs, &err) && !jobs.empty()) job = std::move(jobs[0]);
    } else {
      db->last_job(command_fingerprint_here(argv), env_int("RANK", "SLURM_PROCID"), &job, &err);
    }
  }
  if (!err.empty()) print_error("the job store: " + err + " (the last verdict is left out)");
  return job;
}

std::optional<TuneProfile> stored_profile(const std::string& store, const std::string& fp,
                                          const store::Patience& patience) {
  std::string err;
  std::optional<TuneProfile> p;
  if (auto db = store::Store::open_existing(store, &err, patience)) db->profile(fp, &p, &err);
  if (!err.empty()) print_error("the job store: " + err + " (the tuning profile is left out)");
  return p;
}

int watched_run(const RunRequest& r, const SenseMachine& sense, const std::function<void(const Plan&)>& warn) {
  TuneChoice choice;
  std::string err;
  if (!parse_tune(r.tune, env_or(kTuneSkipVar, ""), &choice, &err, env_or(kTuneAddVar, ""))) {
    print_error(err);
    return kExitUsage;
  }
  unsetenv(kTunePrecisionVar);  // only --tune=+precision sets it: never applied unasked
  std::optional<Supervisor> supervisor;
  if (watch_enabled(r.no_watch, env_or("GPUENV_WATCH", ""))) supervisor.emplace();  // before sensing can start a thread
  Machine m;
  Options o;
  if (!sense(&m, &o)) return kExitBadInput;
  Plan plan = decide(m, o);
  warn(plan);
  if (choice.enabled && r.no_tune) {
    print_error("--tune and --no-tune: choose one");
    return kExitUsage;
  }
  std::optional<Job> last = last_job(r.store, r.argv, r.patience);
  say_last_verdict(last);
  std::string fp = command_fingerprint_here(r.argv);
  RunTuning tuning = choose_tuning(fp, stored_profile(r.store, fp, r.patience), last, choice, r.no_tune);
  tuning.loud = speaks_for_job(env_int("RANK", "SLURM_PROCID"));
  std::string blocked = hook_blocked(plan, r.argv);
  say_tf32_without_hook(plan, r.argv);
  std::string tuned = apply_tuning(tuning, blocked);
  std::string precision = choice.enabled && choice.wants("precision") ? apply_precision(m, o, blocked) : "";
  mark_job_id();
  // The binding first, so that its warning is said before exec replaces us.
  std::string warning;
  apply_binding(plan, &warning);
  if (!warning.empty()) log_message(Severity::kWarning, "cpu binding", warning);
  if (!supervisor) {
    std::string again;
    int code = exec_with_plan(plan, r.argv, &again, &err);  // returns only when it fails
    log_message(Severity::kError, "error", err);
    return code;
  }
  apply_settings(plan);
  return supervise_watched(r, &*supervisor, m, plan, o, &tuning, tuned, precision);
}

std::string feedback_section(const std::string& store, const std::optional<std::string>& tune,
                             const std::vector<std::string>& argv, const store::Patience& patience) {
  std::optional<Job> last = last_job(store, argv, patience);
  if (!last) return render_feedback(last, !argv.empty(), std::nullopt, TuneChoice{});
  TuneChoice choice;
  std::string err;
  parse_tune(tune, env_or(kTuneSkipVar, ""), &choice, &err, env_or(kTuneAddVar, ""));
  return render_feedback(last, !argv.empty(), stored_profile(store, last->command_fp, patience), choice);
}

}  // namespace gpuenv
