// What `labels` and `report --svg` write, end to end (issue 21): only a
// regular file is replaced, `-` and /dev/stdout are written through, and a
// directory another user could steer is refused.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "container_support.h"
#include "process.h"
#include "wait_until.h"
#include "store/store.h"
#include "test_paths.h"
#include "text_files.h"

namespace gpuenv::testing {
namespace {

namespace stdfs = std::filesystem;

constexpr uid_t kNobody = 65534;

using testing::contains;

using testing::slurp;

// A job in a store of its own, for `report 1 --db FILE`.
std::string store_with_a_job(const std::string& dir) {
  std::string path = dir + "/jobs.db", err;
  auto db = store::Store::open(path, &err);
  EXPECT_TRUE(db) << err;
  Job j;
  j.argv = {"python", "train.py"};
  j.cwd = "/";
  j.started_at = "2025-01-01T00:00:00Z";
  j.plan_json = "{}";
  j.context.gpus.push_back({"GPU-a", "NVIDIA H200", 143771.0, 5, 16, 1980.0, 700.0});
  for (int i = 0; i < 10; ++i) {
    JobSample s;
    s.t = i;
    s.v[kUtilPct] = 50;
    j.timeline.add(s);
  }
  std::int64_t id = 0;
  EXPECT_TRUE(db && db->add_job(j, &id, &err)) << err;
  return path;
}

// The targets rename(2) used to replace: a FIFO, a link to /dev/null and,
// as root, a character device (a copy of /dev/null made in the scratch dir).
struct Target {
  std::string path, kind;
};

std::vector<Target> odd_targets(const std::string& dir) {
  std::vector<Target> out;
  EXPECT_EQ(mkfifo((dir + "/fifo").c_str(), 0644), 0);
  out.push_back({dir + "/fifo", "a FIFO"});
  stdfs::create_symlink("/dev/null", dir + "/devnull-link");
  out.push_back({dir + "/devnull-link", "a symbolic link"});
  if (geteuid() == 0 && mknod((dir + "/null").c_str(), S_IFCHR | 0666, makedev(1, 3)) == 0)
    out.push_back({dir + "/null", "a character device"});
  return out;
}

void expect_untouched(const Target& t, const struct stat& before) {
  struct stat after {};
  ASSERT_EQ(lstat(t.path.c_str(), &after), 0) << t.path;
  EXPECT_EQ(after.st_mode, before.st_mode) << t.path;
  EXPECT_EQ(after.st_ino, before.st_ino) << t.path;
}

void expect_refused(const std::vector<std::string>& args, const Target& t) {
  struct stat before {};
  ASSERT_EQ(lstat(t.path.c_str(), &before), 0);
  ProcessResult r = run_gpuenv(args);
  EXPECT_EQ(r.exit_code, 1) << t.path << ": " << r.err;
  EXPECT_TRUE(contains(r.err, t.path + " is " + t.kind + ": gpuenv replaces only regular files")) << r.err;
  expect_untouched(t, before);
}

TEST(OutputFiles, LabelsLeavesADeviceFifoOrLinkAlone) {
  ScratchDir dir;
  for (const Target& t : odd_targets(dir.path()))
    expect_refused({"labels", "--once", "--cache-root", dir.path() + "/cache", "--output", t.path}, t);
}

TEST(OutputFiles, ReportSvgLeavesADeviceFifoOrLinkAlone) {
  ScratchDir dir;
  std::string db = store_with_a_job(dir.path());
  for (const Target& t : odd_targets(dir.path())) expect_refused({"report", "1", "--db", db, "--svg", t.path}, t);
}

TEST(OutputFiles, StdoutIsWrittenThrough) {
  ScratchDir dir;
  std::string db = store_with_a_job(dir.path());
  ProcessResult r = run_gpuenv({"report", "1", "--db", db, "--svg", "/dev/stdout"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("<svg", 0), 0u) << r.out.substr(0, 80);
  r = run_gpuenv({"labels", "--once", "--cache-root", dir.path() + "/cache", "--output", "/dev/stdout"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "gpuenv.dev/gpu.count=0")) << r.out;
}

// up/features.d -> a root-only directory, planted by another user in a
// directory they own.
TEST(OutputFiles, APlantedDirectoryLinkIsNotFollowedAsRoot) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to give a directory to another user";
  ScratchDir dir;
  std::string up = dir.path() + "/up", root_only = dir.path() + "/root-only";
  ASSERT_EQ(mkdir(up.c_str(), 0755), 0);
  ASSERT_EQ(mkdir(root_only.c_str(), 0700), 0);
  std::ofstream(root_only + "/gpuenv") << "precious";
  stdfs::create_directory_symlink(root_only, up + "/features.d");
  ASSERT_EQ(lchown((up + "/features.d").c_str(), kNobody, kNobody), 0);
  ASSERT_EQ(chown(up.c_str(), kNobody, kNobody), 0);
  ProcessResult r = run_gpuenv({"labels", "--once", "--cache-root", dir.path() + "/cache", "--output",
                                up + "/features.d/gpuenv"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_TRUE(contains(r.err, up + " is owned by uid 65534")) << r.err;
  // The same link in a directory of root's that anyone may write to (sticky).
  ASSERT_EQ(chown(up.c_str(), 0, 0), 0);
  ASSERT_EQ(chmod(up.c_str(), 01777), 0);
  r = run_gpuenv({"labels", "--once", "--cache-root", dir.path() + "/cache", "--output", up + "/features.d/gpuenv"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_TRUE(contains(r.err, up + "/features.d is a symbolic link owned by uid 65534")) << r.err;
  EXPECT_EQ(slurp(root_only + "/gpuenv"), "precious");
}

// Item 3: with no --output on a machine that is no NFD node, say so at once
// instead of retrying mkdir every round; keep looping where it can write.
TEST(OutputFiles, LabelsWithoutNfdsDirectoryExits1AtOnce) {
  ScratchDir dir;
  std::string parent = dir.path() + "/node-feature-discovery";
  ProcessOptions o;
  o.env["GPUENV_FEATURES_D"] = parent + "/features.d";
  o.timeout_ms = 15000;
  for (std::vector<std::string> args : {std::vector<std::string>{"labels"}, {"labels", "--once"}}) {
    args.insert(args.end(), {"--cache-root", dir.path() + "/cache"});
    ProcessResult r = run_gpuenv(args, o);
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_TRUE(contains(r.err, "labels: " + parent + " does not exist")) << r.err;
    for (const char* fix : {"--output FILE", "--output -", "--json"}) EXPECT_TRUE(contains(r.err, fix)) << r.err;
    EXPECT_FALSE(stdfs::exists(parent));
  }
  ProcessResult r = run_gpuenv({"labels", "--json", "--cache-root", dir.path() + "/cache"}, o);
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

TEST(OutputFiles, LabelsKeepsLoopingWhereNfdsDirectoryIs) {
  ScratchDir dir;
  std::string parent = dir.path() + "/node-feature-discovery";
  ASSERT_EQ(mkdir(parent.c_str(), 0755), 0);
  Background b({test_paths::gpuenv_bin(), "labels", "--interval", "1", "--cache-root", dir.path() + "/cache"},
               {{"GPUENV_FEATURES_D", parent + "/features.d"}});
  // Written, and written again: the loop goes on (each round renames a new
  // file into place, so the inode changes).
  std::string out = parent + "/features.d/gpuenv";
  auto inode = [&] {
    struct stat st{};
    return stat(out.c_str(), &st) == 0 ? st.st_ino : 0;
  };
  ASSERT_TRUE(wait_until([&] { return inode() != 0; })) << b.log();
  ino_t first = inode();
  ASSERT_TRUE(wait_until([&] { return inode() != first && inode() != 0; })) << "not rewritten: " << b.log();
  kill(b.pid(), SIGTERM);
  int code = -1;
  ASSERT_TRUE(b.wait_exit(10000, &code)) << "SIGTERM did not end the loop: " << b.log();
  EXPECT_EQ(code, 0) << b.log();
}

// Item 15: a command whose stdout cannot be written exits 1 naming the error
// (before: exit 0 and an empty file on a full disk).
ProcessResult run_into_dev_full(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {"sh", "-c", "exec \"$0\" \"$@\" > /dev/full", test_paths::gpuenv_bin()};
  argv.insert(argv.end(), args.begin(), args.end());
  ProcessOptions o;
  o.env = {{"GPUENV_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1"},
           {"GPUENV_CUDA_LIBRARY", "/nonexistent/libcuda.so.1"},
           {"GPUENV_WATCH", "0"}};
  return run_process(argv, o);
}

TEST(OutputFiles, AFullStdoutExits1NamingTheError) {
  if (access("/dev/full", W_OK) != 0) GTEST_SKIP() << "no /dev/full";
  ScratchDir dir;
  std::string db = store_with_a_job(dir.path());
  const std::string h200 = (test_paths::tests_dir() + "/machines/h200.json");
  std::vector<std::vector<std::string>> commands = {
      {"env", "--format", "dotenv", "--machine", h200},
      {"detect", "--machine", h200},
      {"detect", "--json", "--machine", h200},
      {"report", "--db", db},
      {"report", "--json", "--db", db},
      {"report", "1", "--db", db},
      {"plan-memory", "--machine", h200, "--arch", "gpt2", "--hidden", "768", "--layers", "12", "--heads",
       "12", "--vocab", "50257", "--seq", "1024", "--batch", "8"},
      {"labels", "--once", "--output", "-", "--cache-root", dir.path() + "/cache"},
  };
  for (const auto& args : commands) {
    ProcessResult r = run_into_dev_full(args);
    EXPECT_EQ(r.exit_code, 1) << args[0] << " " << args[1] << ": " << r.err;
    EXPECT_TRUE(contains(r.err, "No space left on device")) << args[0] << " " << args[1] << ": " << r.err;
  }
}

}  // namespace
}  // namespace gpuenv::testing
