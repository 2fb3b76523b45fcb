#include "cli/cmd_watch.h"

#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>

#include "act/render/job_report.h"
#include "act/log.h"
#include "act/render/printable.h"
#include "act/run.h"
#include "act/supervise.h"
#include "act/tune.h"
#include "cli/cmd_bench.h"
#include "model/exit_codes.h"
#include "cli/run_profile.h"
#include "decide/decide.h"
#include "decide/launcher_env.h"
#include "decide/rules/rule_measured.h"
#include "decide/tune_search.h"
#include "decide/precision_tune.h"
#include "decide/verdict.h"
#include "decide/visible.h"
#include "sys/fs.h"
#include "sense/nvml/job_watch.h"
#include "sense/python/python_hook.h"
#include "sense/python/speed_report.h"
#include "store/fingerprint.h"

namespace gpuenv {
namespace {

bool watch_enabled(const RunFlags& f) { return !f.no_watch && env_or("GPUENV_WATCH", "1") != "0"; }

std::chrono::milliseconds watch_interval() {
  int ms = std::atoi(env_or("GPUENV_WATCH_INTERVAL_MS", "1000").c_str());
  return std::chrono::milliseconds(ms >= 50 && ms <= 60000 ? ms : 1000);
}

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
  return !p.empty() && std::filesystem::is_regular_file(p, ec);
}

// The script a command runs: its first argument after the program that is a
// file (train.py of `python train.py`), else the program when named by path.
std::string script_of(const std::vector<std::string>& argv) {
  for (std::size_t i = 1; i < argv.size(); ++i)
    if (regular_file(argv[i])) return argv[i];
  return !argv.empty() && argv[0].find('/') != std::string::npos && regular_file(argv[0]) ? argv[0] : "";
}

// Neither the job's start nor its exit status waits long for the store: a store another process
// holds gets this long, and a stop signal ends the wait at once.
store::Patience record_patience() { return {std::chrono::milliseconds(1500), stop_signal_pending}; }

std::optional<Job> last_job(const Context& ctx, const RunFlags& f, const std::vector<std::string>& argv) {
  std::string err;
  auto db = store::Store::open_existing(store_path(ctx, f.db), &err, record_patience());
  std::optional<Job> job;
  if (db) {
    if (argv.empty()) {
      std::vector<Job> jobs;
      if (db->recent_jobs(1, &jobs, &err) && !jobs.empty()) job = std::move(jobs[0]);
    } else {
      db->last_job(store::command_fingerprint(argv, current_dir()), env_int("RANK", "SLURM_PROCID"), &job, &err);
    }
  }
  if (!err.empty()) print_error("the job store: " + err);
  return job;
}

std::string refuse_hint(const std::string& name) {
  return "refuse: --tune=-" + name + " or " + kTuneSkipVar + "=" + name;
}

// Puts gpuenv's Python hook first on PYTHONPATH; "" or why it could not.
// `needs`: a module the caller's setting loads from beside sitecustomize.py.
std::string put_hook_on_path(const char* needs = nullptr) {
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
std::string apply_tuning(const RunTuning& t) {
  if (!t.line.empty() && t.loud) log_message(Severity::kInfo, "tune", t.line);
  if (t.settings.empty()) return "";
  if (std::string why = put_hook_on_path(); !why.empty()) {
    print_error("--tune: " + why + "; running untuned");
    return "";
  }
  setenv(kTuneVar, t.settings.c_str(), 1);
  return t.settings;
}

std::optional<TuneProfile> stored_profile(const Context& ctx, const RunFlags& f, const std::string& fp) {
  std::string err;
  std::optional<TuneProfile> p;
  if (auto db = store::Store::open_existing(store_path(ctx, f.db), &err, record_patience())) db->profile(fp, &p, &err);
  if (!err.empty()) print_error("the job store: " + err + " (the tuning profile is left out)");
  return p;
}

// The finished job refines the profile (rank 0's job only: the others apply what it chose).
void refine_tuning(const Context& ctx, const RunFlags& f, const Job& job, RunTuning* t) {
  if (!t->profile || job.id == 0 || !speaks_for_job(job.rank)) return;
  std::vector<std::string> notes = refine_profile(&*t->profile, tune_run(job), judge(job));
  std::string err;
  auto db = store::Store::open(store_path(ctx, f.db), &err, record_patience());
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

// --tune=+precision: bf16 autocast where the job's GPUs have bf16 (decide/precision_tune.h).
// "bf16" when applied, for the record; "" when refused (said).
std::string apply_precision(const Machine& m, const Options& o) {
  if (std::string why = bf16_autocast_refusal(m, o); !why.empty()) {
    print_error("--tune=+precision refused: " + why + "; the job runs in its own precision");
    return "";
  }
  if (std::string why = put_hook_on_path(kPrecisionHookFile); !why.empty()) {
    print_error("--tune=+precision: " + why + "; running untuned");
    return "";
  }
  setenv(kTunePrecisionVar, "bf16", 1);
  log_message(Severity::kInfo, "tune", "--tune=+precision: the job's forward passes and losses run under bf16 autocast "
              "unless the script sets its own precision (docs/precision.md; refuse: --tune=-precision)");
  return "bf16";
}

void say_last_verdict(const std::optional<Job>& last) {
  if (!last || !speaks_for_job(env_int("RANK", "SLURM_PROCID"))) return;
  Verdict v = judge(*last)[0];
  log_message(Severity::kInfo, "last verdict", "last run of this command (job " + std::to_string(last->id) + ", " + last->started_at + "): " + v.name +
              ": " + v.evidence + "; fix: " + v.fix);
}

// The GPUs this process's job uses: the plan's visible ones, or under a
// launcher's LOCAL_RANK the one of that rank.
std::vector<std::string> job_gpus(const Machine& m, const Options& o) {
  std::vector<const Gpu*> gpus = visible_gpus(visible_devices(m, o));
  LaunchEnv launch = launch_env(o);
  if (launch.local_rank && gpus.size() > 1 && std::size_t(*launch.local_rank) < gpus.size())
    gpus = {gpus[*launch.local_rank]};
  std::vector<std::string> uuids;
  for (const Gpu* g : gpus)
    if (g->uuid) uuids.push_back(*g->uuid);
  return uuids;
}

std::optional<int> cpus_per_gpu(const Machine& m, const Plan& plan, const Options& o) {
  if (plan.binding && !plan.binding->cpus.empty()) return int(plan.binding->cpus.size());
  if (!m.host.usable_cpus) return std::nullopt;
  return std::max(1, *m.host.usable_cpus / launch_env(o).local_world_size.value_or(1));
}

Job new_job(const Machine& m, const Plan& plan, const std::vector<std::string>& argv) {
  Job j;
  j.argv = argv;
  j.cwd = current_dir();
  j.command_fp = store::command_fingerprint(argv, j.cwd);
  j.script_path = script_of(argv);
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

void keep_job(const Context& ctx, const RunFlags& f, Job* job) {
  std::string err;
  auto db = store::Store::open(store_path(ctx, f.db), &err, record_patience());
  if (!db || !db->add_job(*job, &job->id, &err)) {
    std::string why = stop_signal_pending() ? "a stop signal arrived (" + err + ")" : err;
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

int supervise_watched(Context* ctx, const RunFlags& f, Supervisor* supervisor, const Machine& m, const Plan& plan,
                      const Options& o, RunTuning* tuning, const std::string& tuned, const std::string& precision) {
  Job job = new_job(m, plan, ctx->command);
  job.tuned = tuned;
  // The job's own speed: the hook on PYTHONPATH, told where to write.
  std::string speed_file = make_speed_file();
  if (!speed_file.empty() && put_hook_on_path().empty()) setenv(kSpeedFileVar, speed_file.c_str(), 1);
  JobWatch watch;
  JobWatchOptions wo;
  wo.nvml_library = env_or("GPUENV_NVML_LIBRARY", wo.nvml_library);
  wo.uuids = job_gpus(m, o);
  wo.root = getpid();
  wo.interval = watch_interval();
  wo.on_unwatched = [](const std::string& why) { print_error("the job runs unwatched: " + why); };
  auto start = std::chrono::steady_clock::now();
  std::string err;
  ChildExit exit = supervisor->run(ctx->command, &err, [&](pid_t) { watch.start(wo); });
  auto end = std::chrono::steady_clock::now();
  job.duration_s = std::chrono::duration<double>(end - start).count();
  watch.stop(&job.context, &job.timeline);
  if (!speed_file.empty())
    if (auto marks = read_speed_report(speed_file)) {
      auto secs = [](std::chrono::steady_clock::time_point t) {
        return std::chrono::duration<double>(t.time_since_epoch()).count();
      };
      job.speed = job_speed(*marks, secs(start), secs(end));
    }
  if (!exit.started) {
    print_error(err);
    return exit.code;
  }
  job.exit_code = exit.code;
  job.context.cpus_per_gpu = cpus_per_gpu(m, plan, o);
  if (!wo.uuids.empty()) job.context.gemm_tflops = measured_gemm_tflops(m, wo.uuids[0]);
  note_precision(m, o, precision, &job.context);
  keep_job(*ctx, f, &job);
  refine_tuning(*ctx, f, job, tuning);
  return exit.code;
}

}  // namespace

std::optional<std::string> RunFlags::tune_spec() const {
  if (!tune || tune->count() == 0) return std::nullopt;
  return tune_value;
}

void add_run_flags(CLI::App* sub, RunFlags* f) {
  sub->add_flag("--no-watch", f->no_watch, "Do not watch the job (also: GPUENV_WATCH=0); exec it instead");
  sub->add_flag("--no-tune", f->no_tune, "Run untuned, even when the command has a tuning profile");
  f->tune = sub->add_flag("--tune", f->tune_value,
                          "Apply the last verdict's DataLoader settings; --tune=-num_workers,... refuses some, "
                          "--tune=+precision adds bf16 autocast")
                ->option_text("[=-NAME,+NAME,...]");
  sub->add_option("--db", f->db, "The job store (default: gpuenv.db under the cache root)")->option_text("FILE");
}

int run_command(Context* ctx, const RunFlags& f, const std::function<void(const Plan&)>& warn) {
  TuneChoice choice;
  std::string err;
  if (!parse_tune(f.tune_spec(), env_or(kTuneSkipVar, ""), &choice, &err, env_or(kTuneAddVar, ""))) {
    print_error(err);
    return kExitUsage;
  }
  unsetenv(kTunePrecisionVar);  // only --tune=+precision sets it: never applied unasked
  std::optional<Supervisor> supervisor;
  if (watch_enabled(f)) supervisor.emplace();  // before sensing can start a thread
  Machine m;
  if (!ctx->load_machine(&m)) return kExitBadInput;
  Options o = ctx->plan_options(m);
  Plan plan = decide(m, o);
  warn(plan);
  if (choice.enabled && f.no_tune) {
    print_error("--tune and --no-tune: choose one");
    return kExitUsage;
  }
  std::optional<Job> last = last_job(*ctx, f, ctx->command);
  say_last_verdict(last);
  std::string fp = store::command_fingerprint(ctx->command, current_dir());
  RunTuning tuning = choose_tuning(fp, stored_profile(*ctx, f, fp), last, choice, f.no_tune);
  tuning.loud = speaks_for_job(env_int("RANK", "SLURM_PROCID"));
  std::string tuned = apply_tuning(tuning);
  std::string precision = choice.enabled && choice.wants("precision") ? apply_precision(m, o) : "";
  // The binding first, so that its warning is said before exec replaces us.
  std::string warning;
  apply_binding(plan, &warning);
  if (!warning.empty()) log_message(Severity::kWarning, "cpu binding", warning);
  if (!supervisor) {
    std::string again;
    int code = exec_with_plan(plan, ctx->command, &again, &err);  // returns only when it fails
    log_message(Severity::kError, "error", err);
    return code;
  }
  apply_settings(plan);
  return supervise_watched(ctx, f, &*supervisor, m, plan, o, &tuning, tuned, precision);
}

std::string feedback_section(Context* ctx, const RunFlags& f, const std::vector<std::string>& argv) {
  std::optional<Job> last = last_job(*ctx, f, argv);
  if (!last) return argv.empty() ? "" : "\nFeedback: this command has not run under gpuenv run here yet.\n";
  TuneChoice choice;
  std::string err;
  parse_tune(f.tune_spec(), env_or(kTuneSkipVar, ""), &choice, &err, env_or(kTuneAddVar, ""));
  std::vector<Verdict> verdicts = judge(*last);
  std::string out = "\nFeedback from job " + std::to_string(last->id) + " (" + command_text(last->argv, 60) + ", " +
                    printable(last->started_at) + "):\n";
  for (const auto& v : verdicts) out += "  " + v.name + ": " + v.evidence + "\n    fix: " + v.fix + "\n";
  if (auto p = stored_profile(*ctx, f, last->command_fp)) {
    out += "  tuning profile: plain runs apply " + (p->kept.empty() ? std::string("nothing") : p->kept) +
           "; the next --tune " + (p->next.empty() ? std::string("applies nothing") : "applies " + p->next) +
           (p->settled ? " (the search has stopped)" : "") + "\n";
    if (!p->note.empty()) out += "    last: " + printable(p->note) + "\n";
    return out;
  }
  std::vector<TuneChange> changes = tune_changes(verdicts, choice);
  if (changes.empty()) return out + "  gpuenv run --tune would change nothing.\n";
  out += "  gpuenv run --tune sets, on each DataLoader that left them at their defaults:\n";
  for (const auto& c : changes)
    out += "    " + c.name + "=" + c.value + (c.refused ? "  (refused)" : "  (" + refuse_hint(c.name) + ")") + "\n";
  return out;
}

}  // namespace gpuenv
