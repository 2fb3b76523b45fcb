#include "sense/python/python_hook.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <functional>

#include "container_support.h"
#include "sys/fs.h"
#include "test_paths.h"

namespace gpuenv {
namespace {

// A hook directory as installed: root's (or this user's), 0755, the file 0644.
struct HookDir {
  testing::ScratchDir scratch;
  std::string dir = scratch.path() + "/python";
  std::string file = dir + "/sitecustomize.py";
  HookDir() {
    mkdir(dir.c_str(), 0755);
    scratch.file("python/sitecustomize.py", "");
    chmod(dir.c_str(), 0755);
    chmod(file.c_str(), 0644);
  }
};

TEST(PythonHook, AnInstalledHookIsTrusted) {
  HookDir h;
  EXPECT_EQ(unsafe_hook_dir(h.dir), "");
}

// issue 21, 8: a python/ beside the binary was trusted whoever could write it.
TEST(PythonHook, OneAnotherUserCouldChangeIsRefused) {
  struct Row {
    const char* what;
    std::function<void(const HookDir&)> spoil;
    const char* says;
  } rows[] = {
      {"a directory anyone may write", [](const HookDir& h) { chmod(h.dir.c_str(), 0777); }, "writable by everyone"},
      {"even sticky: a new file is code too", [](const HookDir& h) { chmod(h.dir.c_str(), 01777); }, "writable by everyone"},
      {"a directory its group may write", [](const HookDir& h) { chmod(h.dir.c_str(), 0775); }, "writable by its group"},
      {"a file anyone may write", [](const HookDir& h) { chmod(h.file.c_str(), 0666); }, "sitecustomize.py is writable by everyone"},
      {"a file another user owns", [](const HookDir& h) { (void)!chown(h.file.c_str(), 4321, 4321); }, "owned by uid 4321"},
      {"a directory another user owns", [](const HookDir& h) { (void)!chown(h.dir.c_str(), 4321, 4321); }, "owned by uid 4321"},
      {"a file that is a link",
       [](const HookDir& h) {
         std::string real = h.scratch.file("real.py", "");
         unlink(h.file.c_str());
         (void)!symlink(real.c_str(), h.file.c_str());
       },
       "sitecustomize.py is a symbolic link"},
      {"no sitecustomize.py", [](const HookDir& h) { unlink(h.file.c_str()); }, "lstat("},
      {"a module it imports that anyone may write",
       [](const HookDir& h) {
         std::string m = h.scratch.file("python/gpuenv_speed.py", "");
         chmod(m.c_str(), 0666);
       },
       "gpuenv_speed.py is writable by everyone"},
      {"a module it imports that is a link",
       [](const HookDir& h) {
         std::string real = h.scratch.file("real.py", "");
         (void)!symlink(real.c_str(), (h.dir + "/gpuenv_trainer.py").c_str());
       },
       "gpuenv_trainer.py is a symbolic link"},
  };
  for (const Row& r : rows) {
    HookDir h;
    r.spoil(h);
    if (geteuid() != 0 && std::string(r.says).find("uid 4321") != std::string::npos) continue;  // chown needs root
    std::string why = unsafe_hook_dir(h.dir);
    EXPECT_NE(why.find(r.says), std::string::npos) << r.what << ": " << why;
  }
}

// issue 25: the precision module is imported into the job as sitecustomize.py is.
TEST(PythonHook, ThePrecisionModuleIsCheckedWhenThere) {
  HookDir h;
  std::string module = h.scratch.file("python/gpuenv_precision.py", "");
  chmod(module.c_str(), 0644);
  EXPECT_EQ(unsafe_hook_dir(h.dir), "");
  chmod(module.c_str(), 0666);
  EXPECT_NE(unsafe_hook_dir(h.dir).find("gpuenv_precision.py is writable by everyone"), std::string::npos)
      << unsafe_hook_dir(h.dir);
  unlink(module.c_str());
  std::string real = h.scratch.file("real.py", "");
  ASSERT_EQ(symlink(real.c_str(), module.c_str()), 0);
  EXPECT_NE(unsafe_hook_dir(h.dir).find("gpuenv_precision.py is a symbolic link"), std::string::npos);
  unlink(module.c_str());
  EXPECT_EQ(unsafe_hook_dir(h.dir), "");  // absent: --tune=+precision refuses, nothing else cares
}

TEST(PythonHook, ADirectoryThatIsALinkIsRefused) {
  HookDir h;
  std::string link = h.scratch.path() + "/link";
  ASSERT_EQ(symlink(h.dir.c_str(), link.c_str()), 0);
  EXPECT_NE(unsafe_hook_dir(link).find(link + " is a symbolic link"), std::string::npos) << unsafe_hook_dir(link);
}

TEST(PythonHook, ARefusedHookIsNotReturnedAndSaysWhy) {
  HookDir h;
  chmod(h.dir.c_str(), 0777);
  const char* before = std::getenv("GPUENV_PYTHON_DIR");
  std::string saved = before ? before : "";
  setenv("GPUENV_PYTHON_DIR", (h.dir + "/").c_str(), 1);
  PythonHook hook = python_hook();
  EXPECT_EQ(hook.dir, "");
  EXPECT_NE(hook.refused.find("writable by everyone"), std::string::npos) << hook.refused;
  chmod(h.dir.c_str(), 0755);
  hook = python_hook();
  EXPECT_EQ(hook.dir, h.dir);
  EXPECT_EQ(hook.refused, "");
  before ? setenv("GPUENV_PYTHON_DIR", saved.c_str(), 1) : unsetenv("GPUENV_PYTHON_DIR");
}

}  // namespace
}  // namespace gpuenv

namespace gpuenv {
namespace {

// The modules sitecustomize.py imports travel with it: into the build tree
// (CMakeLists.txt) and into the image (docker/Dockerfile).
TEST(PythonHook, ItsModulesAreInstalledBesideIt) {
  std::string src = test_paths::tests_dir() + "/..";
  std::string dockerfile, err;
  ASSERT_TRUE(fs::read_file(src + "/docker/Dockerfile", &dockerfile, &err)) << err;
  std::string build_hook = find_python_hook_dir(test_paths::gpuenv_bin());
  EXPECT_FALSE(build_hook.empty()) << "no python/ beside " << test_paths::gpuenv_bin();
  for (const char* module : kPythonHookModules) {
    EXPECT_TRUE(fs::exists(src + "/python/" + module)) << module;
    EXPECT_NE(dockerfile.find(std::string("python/") + module), std::string::npos) << module;
    EXPECT_TRUE(fs::exists(fs::join(build_hook, module))) << module << " in " << build_hook;
  }
}

}  // namespace
}  // namespace gpuenv
