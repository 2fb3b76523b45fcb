// The run sequence end to end with fakes: a fake environment, spawn, watch,
// exec and clocks, a real store in a temp dir. The fake job reads the
// DataLoader settings the sequence handed the hook (GPUENV_TUNE_DATALOADER
// in the fake environment) and writes the hook's speed line
// (python/gpuenv_speed.py) with steps/s that depend on them.
#include "flow/run.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <map>

#include "builders.h"
#include "decide/decide.h"
#include "decide/run/tune.h"
#include "decide/run/tune_search.h"
#include "flow/command_history.h"
#include "model/exit_codes.h"
#include "process.h"
#include "sense/python/speed_report.h"
#include "sys/file_write.h"
#include "sys/fs.h"

namespace gpuenv::flow {
namespace {

namespace machine = gpuenv::testing::machine;

constexpr const char* kCwd = "/work/project";

class FakeEnvironment : public JobEnvironment {
 public:
  std::optional<std::string> get(const std::string& name) const override {
    auto it = vars.find(name);
    return it == vars.end() ? std::nullopt : std::optional<std::string>(it->second);
  }
  void set(const std::string& name, const std::string& value) override { vars[name] = value; }
  void unset(const std::string& name) override { vars.erase(name); }
  std::map<std::string, std::string> vars;
};

// The job: 600 steps at a rate its DataLoader workers set (3/s untuned, 3 + W
// with W workers), 5 s before the first step and 5 s after the last. It
// advances the steady clock by that much and writes the hook's last line.
struct FakeJob {
  FakeEnvironment* env = nullptr;
  double* clock = nullptr;
  bool starts = true;
  int exit_code = 0;
  std::string yours;  // what the script passes its DataLoader itself (the hook's yours=)
  std::vector<std::map<std::string, std::string>> seen;  // the environment of each run

  ChildExit run(const std::vector<std::string>& argv, std::string* err, const std::function<void(pid_t)>& on_start) {
    seen.push_back(env->vars);
    if (!starts) {
      *err = "cannot run " + argv[0] + ": No such file or directory (not found on PATH)";
      return {false, kExitCommandNotFound};
    }
    on_start(4242);
    std::string tuned = env->get(kTuneVar).value_or("");
    TuneSettings s = parse_settings(tuned);
    if (auto own = parse_settings(yours); own.count("num_workers")) s["num_workers"] = own["num_workers"];
    double rate = s.count("num_workers") ? 3 + std::stod(s["num_workers"]) : 3;
    double start = *clock, first = start + 5, last = first + 600 / rate;
    char line[512];
    std::snprintf(line, sizeof line,
                  "steps=600 batches=601 wait=%.6f first_step=%.6f last_step=%.6f first_batch=%.6f last_batch=%.6f",
                  0.5 * (last - first), first, last, first - 0.1, last);
    std::string text = line + std::string(tuned.empty() ? "" : " tuned=" + tuned) +
                       std::string(yours.empty() ? "" : " yours=" + yours) + "\n";
    if (auto file = env->get(kSpeedFileVar)) {
      std::string werr;
      EXPECT_TRUE(sys::write_file_atomic(*file, text, 0600, &werr)) << werr;
    }
    *clock = last + 5;
    return {true, exit_code};
  }
};

// An input-bound job as NVML and /proc saw it: 20 samples at 30%, its loop
// process on one full core, no workers.
struct FakeWatch {
  int started = 0;
  void stop(JobContext* c, Timeline* t) {
    c->gpus.push_back({"GPU-0", "NVIDIA H200", 143771.0, 5, 16, 1980.0, 700.0});
    c->interval_s = 1;
    for (int i = 0; i < 20; ++i) {
      JobSample s;
      s.t = i;
      s.v[kUtilPct] = 30, s.v[kMemMib] = 20000, s.v[kTopCpuCores] = 1.0, s.v[kCpuCores] = 1.0, s.v[kWorkers] = 0;
      t->add(s);
    }
  }
};

class Spawned : public JobSpawn {
 public:
  explicit Spawned(FakeJob* job) : job_(job) {}
  ChildExit run(const std::vector<std::string>& argv, std::string* err,
                const std::function<void(pid_t)>& on_start) override {
    return job_->run(argv, err, on_start);
  }

 private:
  FakeJob* job_;
};

class Watched : public JobWatcher {
 public:
  explicit Watched(FakeWatch* w) : w_(w) {}
  void start(JobWatchOptions) override { ++w_->started; }
  void stop(JobContext* c, Timeline* t, std::optional<std::int64_t>*) override { w_->stop(c, t); }

 private:
  FakeWatch* w_;
};

struct Line {
  Severity level;
  std::string event, text;
};

struct RunFakes {
  std::string dir = gpuenv::testing::make_temp_dir("gpuenv-flow-run");
  FakeEnvironment environment;
  double clock = 1000;
  int utc_calls = 0;
  FakeJob job{&environment, &clock};
  FakeWatch watch;
  int supervised = 0;
  std::vector<std::string> execd;
  std::map<std::string, std::string> exec_env;
  std::vector<Line> said;

  RunRequest request(std::optional<std::string> tune = std::nullopt) {
    RunRequest r;
    r.argv = {"python3", "train.py"};
    r.store = dir + "/gpuenv.db";
    r.tune = std::move(tune);
    return r;
  }
  RunEnv env() {
    RunEnv e;
    e.sense = [](Machine* m, Options*) { return *m = machine::h200(2), true; };
    e.environment = &environment;
    e.supervise = [this] { return ++supervised, std::make_unique<Spawned>(&job); };
    e.watch = [this] { return std::make_unique<Watched>(&watch); };
    e.exec = [this](const std::vector<std::string>& argv, std::string* err) {
      execd = argv, exec_env = environment.vars;
      *err = "cannot run python3: exec is faked";
      return kExitCannotExecute;
    };
    e.bind = [](const Plan&, std::string*) {};
    e.clock = [this] { return clock; };
    e.utc_clock = [this] {
      char t[32];
      std::snprintf(t, sizeof t, "2025-01-01T00:00:%02dZ", utc_calls++);
      return std::string(t);
    };
    e.unix_clock = [] { return 1735689600.5; };
    e.cwd = [] { return std::string(kCwd); };
    e.pid = [] { return pid_t(77); };
    e.speed_file = [this] { return dir + "/speed"; };
    e.python_hook = [this] { return PythonHook{dir + "/hook", ""}; };
    e.log = [this](Severity level, const std::string& event, const std::string& text, nlohmann::ordered_json) {
      said.push_back({level, event, text});
    };
    return e;
  }
  /// The text of the last line said as `event`; "" when none.
  std::string last(const std::string& event) const {
    for (auto it = said.rbegin(); it != said.rend(); ++it)
      if (it->event == event) return it->text;
    return "";
  }
  /// Whether a line said as `event` holds `text`.
  bool said_with(const std::string& event, const std::string& text) const {
    for (const auto& l : said)
      if (l.event == event && l.text.find(text) != std::string::npos) return true;
    return false;
  }
  std::optional<TuneProfile> profile() {
    return read_history(dir + "/gpuenv.db", command_fingerprint_in({"python3", "train.py"}, kCwd), std::nullopt, {})
        .profile;
  }
};

TEST(RunFlow, TuneConvergesOverThreeRuns) {
  RunFakes f;
  ASSERT_EQ(run_job(f.request(), f.env()), 0);  // untuned: the baseline, input-bound
  EXPECT_EQ(f.last("verdict"), "job 1: input-bound (gpuenv report 1)");
  EXPECT_FALSE(f.profile()) << "a plain run makes no profile";
  EXPECT_FALSE(f.job.seen[0].count(kTuneVar));
  EXPECT_EQ(f.job.seen[0].at(kSpeedFileVar), f.dir + "/speed");
  EXPECT_EQ(f.job.seen[0].at("PYTHONPATH").rfind(f.dir + "/hook", 0), 0u) << "the hook first on PYTHONPATH";

  ASSERT_EQ(run_job(f.request(""), f.env()), 0);  // --tune: the verdict's settings
  std::string first = f.job.seen[1].at(kTuneVar);
  TuneSettings tried = parse_settings(first);
  ASSERT_TRUE(tried.count("num_workers")) << first;
  int workers = std::stoi(tried["num_workers"]);
  EXPECT_EQ(tried["pin_memory"], "True");
  std::optional<TuneProfile> p = f.profile();
  ASSERT_TRUE(p);
  ASSERT_EQ(p->runs.size(), 2u);
  EXPECT_EQ(p->runs[0].settings, "");
  EXPECT_NEAR(*p->runs[0].steps_per_s, 3, 0.1);  // measured from the hook's first and last step
  EXPECT_EQ(p->runs[1].settings, first);
  EXPECT_NEAR(*p->runs[1].steps_per_s, 3 + workers, 0.1 * (3 + workers));
  EXPECT_EQ(p->kept, first) << "faster than untuned: kept";
  EXPECT_FALSE(p->settled);
  TuneSettings next = parse_settings(p->next);
  EXPECT_EQ(std::stoi(next["num_workers"]), workers * 3 / 4) << p->next << ": the search goes down";

  ASSERT_EQ(run_job(f.request(""), f.env()), 0);  // --tune: fewer workers, slower
  EXPECT_EQ(f.job.seen[2].at(kTuneVar), p->next);
  p = f.profile();
  ASSERT_TRUE(p);
  ASSERT_EQ(p->runs.size(), 3u);
  EXPECT_TRUE(p->settled) << p->note;
  EXPECT_EQ(p->kept, first);
  EXPECT_EQ(p->next, first) << "settled on the faster";

  ASSERT_EQ(run_job(f.request(""), f.env()), 0);  // --tune: the profile's choice, and it stays
  EXPECT_EQ(f.job.seen[3].at(kTuneVar), first);
  EXPECT_TRUE(f.said_with("tune", "(the tuning profile's choice")) << f.last("tune");
  std::optional<TuneProfile> settled = f.profile();
  ASSERT_TRUE(settled);
  EXPECT_EQ(settled->runs.size(), 4u);
  EXPECT_TRUE(settled->settled);
  EXPECT_EQ(settled->kept, first);
  EXPECT_EQ(settled->next, first);

  ASSERT_EQ(run_job(f.request(), f.env()), 0);  // a plain run applies what the profile kept
  EXPECT_EQ(f.job.seen[4].at(kTuneVar), first);
  EXPECT_EQ(f.watch.started, 5);
}

TEST(RunFlow, AScriptsOwnWorkersAreKnownFromTheFirstRun) {
  // Issue 40: the ImageNet loop passes num_workers=1 itself. The untuned run's fix must not say
  // --tune applies it, and --tune must not search it.
  RunFakes f;
  f.job.yours = "num_workers=1";
  ASSERT_EQ(run_job(f.request(), f.env()), 0);
  std::string err;
  auto db = store::Store::open_existing(f.dir + "/gpuenv.db", &err);
  ASSERT_TRUE(db) << err;
  std::optional<Job> job;
  ASSERT_TRUE(db->last_job(command_fingerprint_in({"python3", "train.py"}, kCwd), std::nullopt, &job, &err)) << err;
  ASSERT_TRUE(job);
  EXPECT_EQ(job->context.script_settings, "num_workers=1");
  ASSERT_TRUE(job->verdict);
  EXPECT_NE(job->verdict->fix.find("pass num_workers="), std::string::npos) << job->verdict->fix;
  EXPECT_EQ(job->verdict->fix.find("--tune applies it"), std::string::npos) << job->verdict->fix;
  ASSERT_EQ(run_job(f.request(""), f.env()), 0);
  EXPECT_EQ(parse_settings(f.job.seen[1].at(kTuneVar)).count("num_workers"), 0u) << f.job.seen[1].at(kTuneVar);
}

TEST(RunFlow, TheVerdictLineAndTheLastVerdictNameTheJobsVerdict) {
  RunFakes f;
  ASSERT_EQ(run_job(f.request(), f.env()), 0);
  EXPECT_EQ(f.last("last verdict"), "") << "no run before";
  EXPECT_EQ(f.last("verdict"), "job 1: input-bound (gpuenv report 1)");
  ASSERT_EQ(run_job(f.request(), f.env()), 0);
  EXPECT_EQ(f.last("last verdict").rfind("last run of this command (job 1, 2025-01-01T00:00:00Z): input-bound: ", 0), 0u)
      << f.last("last verdict");
  EXPECT_EQ(f.last("verdict"), "job 2: input-bound (gpuenv report 2)");
  std::string err;
  auto db = store::Store::open_existing(f.dir + "/gpuenv.db", &err);
  ASSERT_TRUE(db) << err;
  std::optional<Job> stored;
  ASSERT_TRUE(db->job(1, &stored, &err)) << err;
  ASSERT_TRUE(stored && stored->verdict) << "the verdict is stored with the job";
  EXPECT_EQ(stored->verdict->name, "input-bound");
  EXPECT_NE(f.last("last verdict").find(stored->verdict->evidence + "; fix: " + stored->verdict->fix),
            std::string::npos);
}

// The last verdict line says the verdict stored with the job, not one judged again.
TEST(RunFlow, TheLastVerdictIsTheStoredOne) {
  RunFakes f;
  ASSERT_EQ(run_job(f.request(), f.env()), 0);
  std::string err;
  {
    auto db = store::Store::open(f.dir + "/gpuenv.db", &err);
    ASSERT_TRUE(db) << err;
    std::optional<Job> j;
    ASSERT_TRUE(db->job(1, &j, &err) && j) << err;
    j->verdict = JobVerdict{"busy", "judged by an older rule", "none"};
    ASSERT_TRUE(db->add_job(*j, &j->id, &err)) << err;  // job 2, its verdict changed
  }
  ASSERT_EQ(run_job(f.request(), f.env()), 0);
  EXPECT_EQ(f.last("last verdict"),
            "last run of this command (job 2, 2025-01-01T00:00:00Z): busy: judged by an older rule; fix: none");
}

TEST(RunFlow, NoWatchExecsWithThePlansEnvironment) {
  RunFakes f;
  RunRequest r = f.request();
  r.no_watch = true;
  EXPECT_EQ(run_job(r, f.env()), kExitCannotExecute);
  EXPECT_EQ(f.supervised, 0) << "no Supervisor for an exec'd job";
  EXPECT_EQ(f.execd, r.argv);
  Plan plan = decide(machine::h200(2), Options{});
  ASSERT_FALSE(plan.settings.empty());
  for (const Setting& s : plan.settings) EXPECT_EQ(f.exec_env[s.name], s.value) << s.name;
  EXPECT_EQ(f.exec_env["GPUENV_JOB_ID"], "run-1735689600-77");
  EXPECT_FALSE(f.exec_env.count(kSpeedFileVar)) << "an exec'd job is not measured";
  EXPECT_EQ(f.last("error"), "cannot run python3: exec is faked");
}

TEST(RunFlow, GpuenvWatchZeroExecsToo) {
  RunFakes f;
  f.environment.vars["GPUENV_WATCH"] = "0";
  EXPECT_EQ(run_job(f.request(), f.env()), kExitCannotExecute);
  EXPECT_EQ(f.supervised, 0);
  EXPECT_EQ(f.execd, f.request().argv);
}

TEST(RunFlow, ACommandThatCannotStartReturnsItsCode) {
  RunFakes f;
  f.job.starts = false;
  EXPECT_EQ(run_job(f.request(), f.env()), kExitCommandNotFound);
  EXPECT_EQ(f.last("error"), "cannot run python3: No such file or directory (not found on PATH)");
  EXPECT_EQ(f.last("verdict"), "") << "nothing recorded";
  EXPECT_FALSE(fs::exists(f.dir + "/gpuenv.db"));
}

TEST(RunFlow, AStoreThatCannotBeOpenedStillPassesTheExitStatusOn) {
  RunFakes f;
  std::string err;
  ASSERT_TRUE(sys::write_file_atomic(f.dir + "/file", "", 0600, &err)) << err;
  f.job.exit_code = 6;
  RunRequest r = f.request();
  r.store = f.dir + "/file/gpuenv.db";  // under a file: no directory can be made
  EXPECT_EQ(run_job(r, f.env()), 6);
  EXPECT_EQ(f.last("error").rfind("the job's record was skipped, its exit status 6 is passed on: ", 0), 0u)
      << f.last("error");
  EXPECT_EQ(f.last("verdict"), "");
}

TEST(RunFlow, TuneAndNoTuneRefused) {
  RunFakes f;
  RunRequest r = f.request("");
  r.no_tune = true;
  EXPECT_EQ(run_job(r, f.env()), kExitUsage);
  EXPECT_EQ(f.last("error"), "--tune and --no-tune: choose one");
  EXPECT_TRUE(f.job.seen.empty());
}

}  // namespace
}  // namespace gpuenv::flow
