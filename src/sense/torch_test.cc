#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "sense/sense.h"

namespace gpuenv {
namespace {

namespace stdfs = std::filesystem;

// Sets environment variables for one test and restores them after.
class EnvGuard {
 public:
  EnvGuard() {
    for (const char* name : kNames) {
      const char* v = getenv(name);
      saved_.emplace_back(name, v ? std::optional<std::string>(v) : std::nullopt);
      unsetenv(name);
    }
  }
  ~EnvGuard() {
    for (const auto& [name, value] : saved_)
      value ? setenv(name.c_str(), value->c_str(), 1) : unsetenv(name.c_str());
  }
  void set(const char* name, const std::string& value) { setenv(name, value.c_str(), 1); }

 private:
  static constexpr const char* kNames[] = {"VIRTUAL_ENV", "CONDA_PREFIX", "PATH", "HOME"};
  std::vector<std::pair<std::string, std::optional<std::string>>> saved_;
};

// A fake root holding Python installations.
class FakeTree {
 public:
  FakeTree() {
    std::string tmpl = (stdfs::temp_directory_path() / "gpuenv_torch_XXXXXX").string();
    root_ = mkdtemp(tmpl.data());
  }
  ~FakeTree() { stdfs::remove_all(root_); }

  void file(const std::string& path, const std::string& text = "") {
    stdfs::create_directories(stdfs::path(root_ + path).parent_path());
    std::ofstream(root_ + path) << text;
  }
  void link(const std::string& target, const std::string& path) {
    stdfs::create_directories(stdfs::path(root_ + path).parent_path());
    stdfs::create_symlink(target, root_ + path);
  }
  void torch(const std::string& site, const std::string& version,
             const std::string& cuda) {
    file(site + "/torch/version.py",
         "from typing import Optional\n\n__all__ = ['__version__', 'debug', 'cuda']\n"
         "__version__ = '" + version + "'\ndebug = False\ncuda: Optional[str] = " +
             (cuda.empty() ? "None" : "'" + cuda + "'") + "\nhip: Optional[str] = None\n");
  }
  std::optional<Torch> sense() const {
    SenseOptions opts;
    opts.root = root_;
    return sense_torch(opts);
  }

 private:
  std::string root_;
};

const std::string kVenvSite = "/home/u/venv/lib/python3.11/site-packages";

TEST(TorchSense, VirtualEnv) {
  EnvGuard env;
  FakeTree t;
  t.torch(kVenvSite, "2.11.0+cu130", "13.0");
  t.file("/home/u/venv/pyvenv.cfg", "home = /usr/bin\ninclude-system-site-packages = false\n");
  t.torch("/usr/local/lib/python3.11/dist-packages", "2.0.0", "11.8");  // not seen
  env.set("VIRTUAL_ENV", "/home/u/venv");
  env.set("CONDA_PREFIX", "/opt/conda");  // VIRTUAL_ENV wins
  EXPECT_EQ(t.sense(), (Torch{"2.11.0+cu130", "13.0", kVenvSite + "/torch"}));
}

TEST(TorchSense, VirtualEnvWithoutTorchIsNone) {
  EnvGuard env;
  FakeTree t;
  t.file("/home/u/venv/lib/python3.11/site-packages/numpy/__init__.py");
  t.file("/home/u/venv/pyvenv.cfg", "home = /usr/bin\n");
  t.torch("/usr/lib/python3/dist-packages", "2.0.0", "");
  env.set("VIRTUAL_ENV", "/home/u/venv");
  EXPECT_EQ(t.sense(), std::nullopt);
}

TEST(TorchSense, VirtualEnvWithSystemSitePackages) {
  EnvGuard env;
  FakeTree t;
  t.file("/home/u/venv/lib/python3.11/site-packages/numpy/__init__.py");
  t.file("/home/u/venv/pyvenv.cfg", "home = /usr/bin\ninclude-system-site-packages = true\n");
  t.torch("/usr/lib/python3/dist-packages", "2.1.2", "");
  env.set("VIRTUAL_ENV", "/home/u/venv");
  EXPECT_EQ(t.sense(),
            (Torch{"2.1.2", std::nullopt, "/usr/lib/python3/dist-packages/torch"}));
}

TEST(TorchSense, CondaCpuBuild) {
  EnvGuard env;
  FakeTree t;
  t.torch("/opt/conda/envs/ml/lib/python3.12/site-packages", "2.5.1", "");
  env.set("CONDA_PREFIX", "/opt/conda/envs/ml");
  env.set("PATH", "/usr/bin");
  EXPECT_EQ(t.sense(), (Torch{"2.5.1", std::nullopt,
                              "/opt/conda/envs/ml/lib/python3.12/site-packages/torch"}));
}

TEST(TorchSense, PathPythonOnDebian) {
  EnvGuard env;
  FakeTree t;
  t.file("/usr/bin/python3.11");
  t.link("python3.11", "/usr/bin/python3");
  t.torch("/usr/lib/python3/dist-packages", "1.13.1", "");  // apt's, later on sys.path
  t.torch("/usr/local/lib/python3.11/dist-packages", "2.4.0+cu124", "12.4");  // pip's
  t.torch("/usr/local/lib/python3.12/dist-packages", "9.9.9", "");  // another Python
  env.set("PATH", "relative/bin::/nonexistent:/usr/bin:/bin");
  EXPECT_EQ(t.sense(), (Torch{"2.4.0+cu124", "12.4",
                              "/usr/local/lib/python3.11/dist-packages/torch"}));
}

TEST(TorchSense, UserSiteComesFirst) {
  EnvGuard env;
  FakeTree t;
  t.file("/usr/bin/python3.11");
  t.link("python3.11", "/usr/bin/python3");
  t.torch("/usr/local/lib/python3.11/dist-packages", "2.4.0", "12.4");
  t.torch("/home/u/.local/lib/python3.11/site-packages", "2.6.0+cu126", "12.6");
  env.set("PATH", "/usr/bin");
  env.set("HOME", "/home/u");
  EXPECT_EQ(t.sense(), (Torch{"2.6.0+cu126", "12.6",
                              "/home/u/.local/lib/python3.11/site-packages/torch"}));
}

TEST(TorchSense, AbsoluteSymlinkChainStaysInsideRoot) {
  EnvGuard env;
  FakeTree t;
  t.file("/opt/py/bin/python3.12");
  t.link("/opt/py/bin/python3.12", "/usr/local/bin/py");
  t.link("/usr/local/bin/py", "/usr/local/bin/python3");
  t.torch("/opt/py/lib/python3.12/site-packages", "2.7.0+cu128", "12.8");
  env.set("PATH", "/usr/local/bin");
  EXPECT_EQ(t.sense(), (Torch{"2.7.0+cu128", "12.8",
                              "/opt/py/lib/python3.12/site-packages/torch"}));
}

TEST(TorchSense, VenvOnPathWithoutVirtualEnv) {
  EnvGuard env;
  FakeTree t;
  t.file("/usr/bin/python3.11");
  t.link("/usr/bin/python3.11", "/srv/env/bin/python3");
  t.file("/srv/env/pyvenv.cfg", "home = /usr/bin\n");
  t.torch("/srv/env/lib/python3.11/site-packages", "2.3.1+cu121", "12.1");
  t.torch("/usr/local/lib/python3.11/dist-packages", "2.0.0", "");
  env.set("PATH", "/srv/env/bin:/usr/bin");
  EXPECT_EQ(t.sense(), (Torch{"2.3.1+cu121", "12.1",
                              "/srv/env/lib/python3.11/site-packages/torch"}));
}

TEST(TorchSense, BrokenVersionFileIsSkipped) {
  EnvGuard env;
  FakeTree t;
  t.file("/opt/conda/lib/python3.11/site-packages/torch/version.py", "__version__ = x()\n");
  t.torch("/opt/conda/lib/python3/dist-packages", "2.2.0", "12.1");
  env.set("CONDA_PREFIX", "/opt/conda");
  EXPECT_EQ(t.sense(), (Torch{"2.2.0", "12.1", "/opt/conda/lib/python3/dist-packages/torch"}));
}

TEST(TorchSense, NothingFound) {
  EnvGuard env;
  FakeTree t;
  env.set("PATH", "/bin:/usr/bin");
  EXPECT_EQ(t.sense(), std::nullopt);
  t.file("/usr/bin/python3");  // a Python without torch
  EXPECT_EQ(t.sense(), std::nullopt);
  t.link("loop", "/bin/loop");
  t.link("loop", "/bin/python3");  // a loop of links: skipped
  EXPECT_EQ(t.sense(), std::nullopt);
}

TEST(TorchSense, LiveMachine) {
  std::optional<Torch> torch = sense_torch(SenseOptions{});
  if (!torch) GTEST_SKIP() << "no torch for python3 here";
  EXPECT_FALSE(torch->version.empty());
  ASSERT_TRUE(torch->path.has_value());
  EXPECT_TRUE(stdfs::exists(*torch->path + "/version.py"));
}

}  // namespace
}  // namespace gpuenv
