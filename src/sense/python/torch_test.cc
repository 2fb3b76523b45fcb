#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "sense/sense.h"
#include "sense/python/torch_kernels.h"
#include "test_paths.h"

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
  static constexpr const char* kNames[] = {"VIRTUAL_ENV", "CONDA_PREFIX", "PATH", "HOME", "PYTHONUSERBASE"};
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
  void copy(const std::string& fixture, const std::string& path) {
    stdfs::create_directories(stdfs::path(root_ + path).parent_path());
    stdfs::copy_file(std::string((test_paths::tests_dir() + "/fatbins/")) + fixture, root_ + path);
  }
  // The first `bytes` of a fixture: an ELF file cut short.
  void truncated(const std::string& fixture, const std::string& path, std::size_t bytes) {
    std::ifstream in(std::string((test_paths::tests_dir() + "/fatbins/")) + fixture, std::ios::binary);
    std::string data(bytes, '\0');
    in.read(data.data(), bytes);
    file(path, data);
  }
  void dir(const std::string& path) { stdfs::create_directories(root_ + path); }
  const std::string& root() const { return root_; }
  void torch(const std::string& site, const std::string& version,
             const std::string& cuda) {
    file(site + "/torch/version.py",
         "from typing import Optional\n\n__all__ = ['__version__', 'debug', 'cuda']\n"
         "__version__ = '" + version + "'\ndebug = False\ncuda: Optional[str] = " +
             (cuda.empty() ? "None" : "'" + cuda + "'") + "\nhip: Optional[str] = None\n");
  }
  std::optional<Torch> sense(SenseOptions opts = {}, std::string* why = nullptr) const {
    opts.root = root_;
    return why ? sense_torch(opts, why) : sense_torch(opts);
  }

 private:
  std::string root_;
};

const std::string kVenvSite = "/home/u/venv/lib/python3.11/site-packages";

// What sense_torch finds without the doctor switches: torch/__pycache__ absent.
Torch found(const std::string& version, std::optional<std::string> cuda, const std::string& path,
            std::optional<std::string> python = std::nullopt) {
  Torch t;
  t.version = version;
  t.cuda_version = cuda;
  t.path = path;
  t.python = python;
  t.bytecode_cached = false;
  return t;
}

TEST(TorchSense, VirtualEnv) {
  EnvGuard env;
  FakeTree t;
  t.torch(kVenvSite, "2.11.0+cu130", "13.0");
  t.file("/home/u/venv/pyvenv.cfg", "home = /usr/bin\ninclude-system-site-packages = false\n");
  t.torch("/usr/local/lib/python3.11/dist-packages", "2.0.0", "11.8");  // not seen
  t.file("/home/u/venv/bin/python3");
  env.set("VIRTUAL_ENV", "/home/u/venv");
  env.set("CONDA_PREFIX", "/opt/conda");  // VIRTUAL_ENV wins
  EXPECT_EQ(t.sense(), found("2.11.0+cu130", "13.0", kVenvSite + "/torch", "/home/u/venv/bin/python3"));
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
            found("2.1.2", std::nullopt, "/usr/lib/python3/dist-packages/torch"));
}

TEST(TorchSense, CondaCpuBuild) {
  EnvGuard env;
  FakeTree t;
  t.torch("/opt/conda/envs/ml/lib/python3.12/site-packages", "2.5.1", "");
  env.set("CONDA_PREFIX", "/opt/conda/envs/ml");
  env.set("PATH", "/usr/bin");
  EXPECT_EQ(t.sense(), found("2.5.1", std::nullopt,
                             "/opt/conda/envs/ml/lib/python3.12/site-packages/torch"));
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
  EXPECT_EQ(t.sense(), found("2.4.0+cu124", "12.4",
                             "/usr/local/lib/python3.11/dist-packages/torch", "/usr/bin/python3"));
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
  EXPECT_EQ(t.sense(), found("2.6.0+cu126", "12.6",
                             "/home/u/.local/lib/python3.11/site-packages/torch", "/usr/bin/python3"));
}

// pip as the image's user installs under $PYTHONUSERBASE (/cache/pip).
TEST(TorchSense, UserSiteFollowsPythonUserBase) {
  EnvGuard env;
  FakeTree t;
  t.file("/usr/bin/python3.11");
  t.link("python3.11", "/usr/bin/python3");
  t.torch("/usr/local/lib/python3.11/dist-packages", "2.4.0", "12.4");
  t.torch("/home/u/.local/lib/python3.11/site-packages", "2.6.0+cu126", "12.6");
  t.torch("/cache/pip/lib/python3.11/site-packages", "2.12.0+cu130", "13.0");
  env.set("PATH", "/usr/bin");
  env.set("HOME", "/home/u");
  env.set("PYTHONUSERBASE", "/cache/pip");
  EXPECT_EQ(t.sense(), found("2.12.0+cu130", "13.0",
                             "/cache/pip/lib/python3.11/site-packages/torch", "/usr/bin/python3"));
}

TEST(TorchSense, AbsoluteSymlinkChainStaysInsideRoot) {
  EnvGuard env;
  FakeTree t;
  t.file("/opt/py/bin/python3.12");
  t.link("/opt/py/bin/python3.12", "/usr/local/bin/py");
  t.link("/usr/local/bin/py", "/usr/local/bin/python3");
  t.torch("/opt/py/lib/python3.12/site-packages", "2.7.0+cu128", "12.8");
  env.set("PATH", "/usr/local/bin");
  EXPECT_EQ(t.sense(), found("2.7.0+cu128", "12.8", "/opt/py/lib/python3.12/site-packages/torch",
                             "/usr/local/bin/python3"));
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
  EXPECT_EQ(t.sense(), found("2.3.1+cu121", "12.1", "/srv/env/lib/python3.11/site-packages/torch",
                             "/srv/env/bin/python3"));
}

TEST(TorchSense, BrokenVersionFileIsSkipped) {
  EnvGuard env;
  FakeTree t;
  t.file("/opt/conda/lib/python3.11/site-packages/torch/version.py", "__version__ = x()\n");
  t.torch("/opt/conda/lib/python3/dist-packages", "2.2.0", "12.1");
  env.set("CONDA_PREFIX", "/opt/conda");
  EXPECT_EQ(t.sense(), found("2.2.0", "12.1", "/opt/conda/lib/python3/dist-packages/torch"));
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

TEST(TorchSense, PythonFlagWinsOverEnvironment) {
  EnvGuard env;
  FakeTree t;
  t.file("/home/u/venv/pyvenv.cfg", "home = /usr/bin\n");
  t.torch(kVenvSite, "2.0.0", "11.8");
  t.torch("/opt/conda/lib/python3.11/site-packages", "2.1.0", "12.1");
  t.file("/usr/bin/python3");
  t.torch("/usr/lib/python3/dist-packages", "1.13.1", "");
  t.file("/opt/py/bin/python3.12");
  t.torch("/opt/py/lib/python3.12/site-packages", "2.9.0+cu129", "12.9");
  env.set("VIRTUAL_ENV", "/home/u/venv");
  env.set("CONDA_PREFIX", "/opt/conda");
  env.set("PATH", "/usr/bin");
  SenseOptions opts;
  opts.python = "/opt/py/bin/../bin/python3.12";
  std::string why;
  EXPECT_EQ(t.sense(opts, &why), found("2.9.0+cu129", "12.9", "/opt/py/lib/python3.12/site-packages/torch",
                                       "/opt/py/bin/python3.12"));
  EXPECT_EQ(why, "");
}

// doctor asks the interpreter: a torch only its sys.path names ($PYTHONPATH,
// a .pth file, an editable install) is found; the emulation alone misses it,
// and an interpreter that fails leaves the emulation's answer.
TEST(TorchSense, AskPythonSeesWhatTheEmulationMisses) {
  EnvGuard env;
  FakeTree t;
  const std::string& r = t.root();
  t.file("/venv/pyvenv.cfg", "home = /usr/bin\n");
  t.dir("/venv/lib/python3.11/site-packages");
  t.torch("/editable", "2.11.0+cu130", "13.0");
  std::string python = r + "/venv/bin/python3";
  t.file("/venv/bin/python3", "#!/bin/sh\necho ''\necho " + r + "/venv/lib/python3.11/site-packages\necho " + r +
                                   "/editable\necho /no/such/dir\n");
  stdfs::permissions(python, stdfs::perms::owner_all);
  SenseOptions opts;
  opts.root = "/";
  opts.python = python;
  EXPECT_EQ(sense_torch(opts), std::nullopt);
  opts.ask_python = true;
  EXPECT_EQ(sense_torch(opts), found("2.11.0+cu130", "13.0", r + "/editable/torch", python));
  t.file("/venv/bin/python3", "#!/bin/sh\nexit 3\n");
  EXPECT_EQ(sense_torch(opts), std::nullopt);
}

TEST(TorchSense, PythonFlagInVenv) {
  EnvGuard env;
  FakeTree t;
  t.file("/usr/bin/python3.11");
  t.link("/usr/bin/python3.11", "/srv/env/bin/python");
  t.file("/srv/env/pyvenv.cfg", "home = /usr/bin\n");
  t.torch("/srv/env/lib/python3.11/site-packages", "2.3.1+cu121", "12.1");
  t.torch("/usr/local/lib/python3.11/dist-packages", "2.0.0", "");
  SenseOptions opts;
  opts.python = "/srv/env/bin/python";
  EXPECT_EQ(t.sense(opts), found("2.3.1+cu121", "12.1", "/srv/env/lib/python3.11/site-packages/torch",
                                 "/srv/env/bin/python"));
}

TEST(TorchSense, PythonFlagBareNameIsLookedUpOnPath) {
  EnvGuard env;
  FakeTree t;
  t.file("/usr/bin/python3.12");
  t.torch("/usr/local/lib/python3.12/dist-packages", "2.5.0", "12.4");
  t.torch("/usr/local/lib/python3.11/dist-packages", "2.0.0", "");
  env.set("PATH", "/nonexistent:/usr/bin");
  SenseOptions opts;
  opts.python = "python3.12";
  EXPECT_EQ(t.sense(opts), found("2.5.0", "12.4", "/usr/local/lib/python3.12/dist-packages/torch",
                                 "/usr/bin/python3.12"));
}

TEST(TorchSense, PythonFlagProblemsAreExplained) {
  EnvGuard env;
  FakeTree t;
  t.file("/usr/bin/env");
  t.link("env", "/usr/bin/notpython");
  t.link("gone", "/usr/bin/python-dangling");
  t.dir("/opt/py");
  t.file("/usr/bin/python3");  // a Python without torch: no torch, no complaint
  t.torch("/usr/lib/python3/dist-packages", "2.0.0", "");
  env.set("PATH", "/usr/bin");
  struct Row {
    std::string python, why;
  };
  const Row rows[] = {
      {"/x", "--python /x: no such file"},
      {"/usr/bin/python-dangling", "--python /usr/bin/python-dangling: no such file"},
      {"/opt/py", "--python /opt/py: is a directory"},
      {"/usr/bin/env", "--python /usr/bin/env: not a Python interpreter (/usr/bin/env)"},
      {"/usr/bin/notpython", "--python /usr/bin/notpython: not a Python interpreter (/usr/bin/env)"},
      {"python3.99", "--python python3.99: not found on $PATH"},
  };
  for (const Row& row : rows) {
    SenseOptions opts;
    opts.python = row.python;
    std::string why;
    EXPECT_EQ(t.sense(opts, &why), std::nullopt) << row.python;
    EXPECT_EQ(why, row.why);
    EXPECT_EQ(t.sense(opts), std::nullopt) << row.python;  // the old signature stays quiet
  }
  SenseOptions opts;
  opts.python = "/usr/bin/python3";
  std::string why;
  EXPECT_EQ(t.sense(opts, &why),
            found("2.0.0", std::nullopt, "/usr/lib/python3/dist-packages/torch", "/usr/bin/python3"));
  EXPECT_EQ(why, "");
}

TEST(TorchSense, BytecodeCached) {
  EnvGuard env;
  FakeTree t;
  const std::string site = "/opt/conda/lib/python3.11/site-packages";
  t.torch(site, "2.5.1", "12.4");
  env.set("CONDA_PREFIX", "/opt/conda");
  EXPECT_EQ(t.sense()->bytecode_cached, false);  // no __pycache__ (PYTHONDONTWRITEBYTECODE=1)
  t.dir(site + "/torch/__pycache__");
  EXPECT_EQ(t.sense()->bytecode_cached, false);  // empty
  t.file(site + "/torch/__pycache__/notes.txt");
  EXPECT_EQ(t.sense()->bytecode_cached, false);
  t.file(site + "/torch/__pycache__/version.cpython-311.pyc");
  EXPECT_EQ(t.sense()->bytecode_cached, true);
}

const std::string kSite = "/opt/conda/lib/python3.11/site-packages";
const std::string kTorch = kSite + "/torch";

CudaBinary binary(const std::string& path, const std::string& package,
                  std::vector<std::string> targets,
                  std::optional<std::string> distribution = std::nullopt) {
  return CudaBinary{path, package, std::move(targets), std::nullopt, std::move(distribution)};
}

// A conda env with torch, read with the doctor switches.
class TorchKernels : public ::testing::Test {
 protected:
  void SetUp() override {
    t.torch(kSite, "2.11.0+cu130", "13.0");
    env.set("CONDA_PREFIX", "/opt/conda");
  }
  std::optional<Torch> sense(bool kernels, bool extensions) {
    SenseOptions opts;
    opts.with_torch_kernels = kernels;
    opts.with_extensions = extensions;
    return t.sense(opts);
  }
  EnvGuard env;
  FakeTree t;
};

TEST_F(TorchKernels, LibtorchCuda) {
  t.copy("sm89_ptx89.so", kTorch + "/lib/libtorch_cuda.so");
  EXPECT_EQ(sense(false, false)->libtorch_cuda, std::nullopt);  // not asked
  EXPECT_EQ(sense(true, false)->libtorch_cuda,
            binary(kTorch + "/lib/libtorch_cuda.so", "torch", {"sm_89", "compute_89"}));
}

TEST_F(TorchKernels, CpuOnlyTorchHasNone) {
  t.copy("sm80.cubin", kTorch + "/lib/libtorch_cpu.so");  // an ELF file without fatbins
  std::optional<Torch> torch = sense(true, true);
  ASSERT_TRUE(torch);
  EXPECT_EQ(torch->libtorch_cuda, std::nullopt);
  EXPECT_TRUE(torch->extensions.empty());
}

TEST_F(TorchKernels, CorruptLibtorchCudaHasAnError) {
  t.truncated("sm89_ptx89.so", kTorch + "/lib/libtorch_cuda.so", 4096);
  std::optional<CudaBinary> b = sense(true, false)->libtorch_cuda;
  ASSERT_TRUE(b && b->error);
  EXPECT_TRUE(b->targets.empty());
  EXPECT_EQ(*b->error, kTorch + "/lib/libtorch_cuda.so: ELF section table offset 0x1e40 is past "
                                "the end of the file");
}

TEST_F(TorchKernels, SplitLayoutOfTorch1_10) {
  t.copy("sm80_sm90_ptx90.fatbin", kTorch + "/lib/libtorch_cuda_cu.so");
  t.copy("sm100f.fatbin", kTorch + "/lib/libtorch_cuda_cpp.so");
  EXPECT_EQ(sense(true, false)->libtorch_cuda,
            binary(kTorch + "/lib/libtorch_cuda_cu.so", "torch",
                   {"sm_80", "sm_90", "sm_100f", "compute_90", "compute_100f"}));
  // A part without CUDA code does not count.
  FakeTree other;
  other.torch(kSite, "1.12.1+cu113", "11.3");
  other.copy("sm80.cubin", kTorch + "/lib/libtorch_cuda_cu.so");  // an ELF file without fatbins
  other.copy("sm75_sm86.o", kTorch + "/lib/libtorch_cuda_cpp.so");
  SenseOptions opts;
  opts.with_torch_kernels = true;
  EXPECT_EQ(other.sense(opts)->libtorch_cuda,
            binary(kTorch + "/lib/libtorch_cuda_cpp.so", "torch", {"sm_75", "sm_86"}));
}

TEST_F(TorchKernels, Extensions) {
  t.copy("sm89_ptx89.so", kTorch + "/lib/libtorch_cuda.so");  // reported as libtorch_cuda
  t.copy("sm75_sm86.o", kTorch + "/lib/libc10_cuda.so");
  t.copy("sm90a.fatbin", kSite + "/flash_attn_2_cuda.cpython-311-x86_64-linux-gnu.so");
  t.link("flash_attn_2_cuda.cpython-311-x86_64-linux-gnu.so", kSite + "/link.so");  // not followed
  t.copy("compressed.fatbin", kSite + "/nvidia/cu13/lib/libcublas.so.13");
  t.copy("sm100f.fatbin", kSite + "/nvidia/cudnn/lib/libcudnn.so.9.1");
  t.copy("sm80.cubin", kSite + "/bitsandbytes/libbitsandbytes_cpu.so");  // no CUDA code
  t.file(kSite + "/numpy/readme.so.txt", "not a library");
  t.truncated("sm89_ptx89.so", kSite + "/broken/corrupt.so", 4096);
  t.copy("sm90a.fatbin", kSite + "/a/b/c/d/e/deep.so");       // depth 6
  t.copy("sm90a.fatbin", kSite + "/a/b/c/d/e/f/deeper.so");   // depth 7: too deep
  t.copy("sm90a.fatbin", kSite + "/x-1.0.dist-info/x.so");    // skipped
  t.copy("sm90a.fatbin", kSite + "/x/__pycache__/x.so");      // skipped
  t.link("..", kSite + "/loop/up");                           // a loop: not followed
  // The wheels' RECORDs name the distributions (a quoted path too); a
  // directory that is not NAME-VERSION.dist-info is no wheel's.
  t.file(kSite + "/flash_attn-2.7.4.post1.dist-info/RECORD",
         "flash_attn/__init__.py,sha256=abc,10\n"
         "flash_attn_2_cuda.cpython-311-x86_64-linux-gnu.so,sha256=def,4096\n");
  t.file(kSite + "/nvidia_cublas-13.0.0.2.dist-info/RECORD", "nvidia/cu13/lib/libcublas.so.13,,\r\n");
  t.file(kSite + "/a_pkg-1.0.dist-info/RECORD", "\"a/b/c/d/e/deep.so\",sha256=x,1\n");
  t.file(kSite + "/torch-2.11.0+cu130.dist-info/RECORD", "torch/lib/libc10_cuda.so,,\n");
  t.file(kSite + "/broken.dist-info/RECORD", "broken/corrupt.so,,\n");
  EXPECT_TRUE(sense(true, false)->extensions.empty());        // not asked
  std::vector<CudaBinary> ext = sense(false, true)->extensions;
  ASSERT_EQ(ext.size(), 6u);
  EXPECT_EQ(ext[0], binary(kSite + "/a/b/c/d/e/deep.so", "a", {"sm_90a", "compute_90a"}, "a_pkg"));
  EXPECT_EQ(ext[1].path, kSite + "/broken/corrupt.so");
  EXPECT_EQ(ext[1].package, "broken");
  EXPECT_EQ(ext[1].distribution, std::nullopt);
  ASSERT_TRUE(ext[1].error);
  EXPECT_EQ(ext[1].error->find(t.root()), std::string::npos) << *ext[1].error;
  EXPECT_EQ(ext[2], binary(kSite + "/flash_attn_2_cuda.cpython-311-x86_64-linux-gnu.so",
                           "flash_attn_2_cuda", {"sm_90a", "compute_90a"}, "flash_attn"));
  EXPECT_EQ(ext[3], binary(kSite + "/nvidia/cu13/lib/libcublas.so.13", "nvidia",
                           {"sm_80", "sm_90", "compute_90"}, "nvidia_cublas"));
  EXPECT_EQ(ext[4], binary(kSite + "/nvidia/cudnn/lib/libcudnn.so.9.1", "nvidia",
                           {"sm_100f", "compute_100f"}));  // no RECORD lists it
  EXPECT_EQ(ext[5], binary(kTorch + "/lib/libc10_cuda.so", "torch", {"sm_75", "sm_86"}, "torch"));
}

TEST(TorchKernelTargets, SortedCubinsThenPtxByArchitectureAndVariant) {
  FatbinFile f;
  f.executable_sections = 1;
  auto entry = [&](std::uint16_t kind, int arch, std::uint64_t flags) {
    FatbinEntry e;
    e.kind = kind;
    e.arch = arch;
    e.flags = flags;
    f.entries.push_back(e);
  };
  entry(kFatbinKindPtx, 90, 0);
  entry(kFatbinKindCubin, 100, kFatbinFlagFamily);
  entry(kFatbinKindCubin, 90, kFatbinFlagArchSpecific);
  entry(kFatbinKindCubin, 90, 0);
  entry(kFatbinKindCubin, 90, 0);
  entry(kFatbinKindLtoIr, 90, 0);  // not loadable: left out
  entry(kFatbinKindPtx, 120, kFatbinFlagFamily);
  entry(kFatbinKindCubin, 80, 0);
  f.entries.push_back(f.entries.back());
  f.entries.back().relocatable = true;  // __nv_relfatbin beside .nv_fatbin: not loaded
  f.entries.back().arch = 75;
  EXPECT_EQ(loadable_targets(f), (std::vector<std::string>{"sm_80", "sm_90", "sm_90a", "sm_100f",
                                                           "compute_90", "compute_120f"}));
}

TEST(TorchSense, LiveMachine) {
  std::optional<Torch> torch = sense_torch(SenseOptions{});
  if (!torch) GTEST_SKIP() << "no torch for python3 here";
  EXPECT_FALSE(torch->version.empty());
  ASSERT_TRUE(torch->path.has_value());
  EXPECT_TRUE(stdfs::exists(*torch->path + "/version.py"));
  EXPECT_TRUE(torch->bytecode_cached.has_value());
  if (!torch->cuda_version) return;
  SenseOptions opts;
  opts.with_torch_kernels = true;
  std::optional<Torch> cuda = sense_torch(opts);
  ASSERT_TRUE(cuda && cuda->libtorch_cuda);
  EXPECT_EQ(cuda->libtorch_cuda->error, std::nullopt);
  EXPECT_FALSE(cuda->libtorch_cuda->targets.empty());
}

}  // namespace
}  // namespace gpuenv
