// sense_torch: the torch that python3 would import, found by reading files
// only (starting Python with torch is slow, and may not be possible).
//
// The interpreter: SenseOptions::python (--python), else $VIRTUAL_ENV, else
// $CONDA_PREFIX, else the first python3 on $PATH. For --python and $PATH: a
// venv if pyvenv.cfg sits beside its bin/, otherwise the prefix of the file
// its symlinks end at. Its site directories are searched in sys.path order
// (user site first where Python enables it) for torch/version.py.
// Environment variables are the process's own; paths are read under
// SenseOptions::root. Not covered by that emulation: $PYTHONPATH, .pth
// files, editable installs, and relative $PATH entries; doctor
// (SenseOptions::ask_python) asks the interpreter for its real sys.path.
#include <unistd.h>

#include <algorithm>
#include <cstdlib>

#include "sense/capture.h"
#include "sys/fs.h"
#include "sys/subprocess.h"
#include "sense/host/host_parse.h"
#include "sense/sense.h"
#include "sense/python/torch_kernels.h"

namespace gpuenv {

namespace {

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

// "python3.11" -> 11; -1 otherwise.
int minor_version(const std::string& name) {
  if (name.rfind("python3.", 0) != 0 || name.size() == 8 || name.size() > 11)
    return -1;
  int minor = 0;
  for (char c : name.substr(8)) {
    if (c < '0' || c > '9') return -1;
    minor = minor * 10 + (c - '0');
  }
  return minor;
}

// "3.11" for each lib/python3.X under `prefix`, newest first.
std::vector<std::string> python_versions(const std::string& root,
                                         const std::string& prefix) {
  std::vector<std::string> names;
  std::string err;
  fs::list_dir(fs::under(root, prefix + "/lib"), &names, &err);
  std::vector<int> minors;
  for (const std::string& n : names)
    if (int m = minor_version(n); m >= 0) minors.push_back(m);
  std::sort(minors.rbegin(), minors.rend());
  std::vector<std::string> out;
  for (int m : minors) out.push_back("3." + std::to_string(m));
  return out;
}

struct Search {
  std::string root;
  std::vector<std::string> sites;     // in sys.path order
  std::optional<std::string> python;  // the interpreter they belong to
  std::vector<Problem> problems;      // files that are there but cannot be read
};

// Reads `path` (inside root). A missing file is "" without a word; one that
// is there but cannot be read (a FIFO, a device, no permission) is ""
// with a Problem saying so, and `fix`.
std::string read_or_note(Search* s, const std::string& path, const char* fix) {
  std::string real = fs::under(s->root, path), text, err;
  if (fs::read_file(real, &text, &err)) return text;
  if (fs::exists(real)) s->problems.push_back({"torch", "torch_file_unreadable", err, fix});
  return "";
}

// Python's user base: $PYTHONUSERBASE (the image's /cache/pip, where the
// user's pip installs), else ~/.local.
void add_user_site(Search* s, const std::vector<std::string>& versions) {
  std::string base = env("PYTHONUSERBASE");
  if (base.empty() && !env("HOME").empty()) base = env("HOME") + "/.local";
  if (base.empty()) return;
  for (const std::string& v : versions)
    s->sites.push_back(base + "/lib/python" + v + "/site-packages");
}

// Debian's python3 also reads /usr/local/lib/python3.X/dist-packages (where
// pip installs) and /usr/lib/python3/dist-packages (where apt installs).
void add_prefix_sites(Search* s, const std::string& prefix,
                      const std::vector<std::string>& versions) {
  for (const std::string& v : versions) {
    if (prefix == "/usr") s->sites.push_back("/usr/local/lib/python" + v + "/dist-packages");
    s->sites.push_back(prefix + "/lib/python" + v + "/site-packages");
    s->sites.push_back(prefix + "/lib/python" + v + "/dist-packages");
  }
  s->sites.push_back(prefix + "/lib/python3/dist-packages");
}

// A venv, and with include-system-site-packages the user site and the base
// installation (`home` in pyvenv.cfg is the base's bin directory).
void add_venv(Search* s, const std::string& venv) {
  std::vector<std::string> versions = python_versions(s->root, venv);
  std::string text = read_or_note(s, venv + "/pyvenv.cfg",
                                  "make it the regular file `python3 -m venv` writes");
  auto cfg = parse_key_values(text);
  bool system = cfg["include-system-site-packages"] == "true" && !cfg["home"].empty();
  if (system) add_user_site(s, versions);
  add_prefix_sites(s, venv, versions);
  if (system) add_prefix_sites(s, fs::dirname(fs::normalize(cfg["home"])), versions);
}

// A plain installation: the user site, then the prefix's own.
void add_installation(Search* s, const std::string& prefix,
                      std::vector<std::string> versions) {
  if (versions.empty()) versions = python_versions(s->root, prefix);
  add_user_site(s, versions);
  add_prefix_sites(s, prefix, versions);
}

// The file that `python` ends at through its symlinks, if it is one that
// could run.
std::optional<std::string> resolve_python(const Search& s, const std::string& python) {
  std::string resolved, err;
  if (!fs::resolve(s.root, python, &resolved, &err)) return std::nullopt;
  std::string real = fs::under(s.root, resolved);
  if (!fs::exists(real) || fs::is_dir(real)) return std::nullopt;
  if (s.root == "/" && access(real.c_str(), X_OK) != 0) return std::nullopt;
  return resolved;
}

// The sites of `python` (absolute, as named) whose symlinks end at
// `resolved`: its venv, or the installation `resolved` sits in.
void add_python(Search* s, const std::string& python, const std::string& resolved) {
  s->python = python;
  std::string venv = fs::dirname(fs::dirname(python));
  if (fs::exists(fs::under(s->root, venv + "/pyvenv.cfg"))) return add_venv(s, venv);
  int minor = minor_version(fs::basename(resolved));
  std::vector<std::string> versions;
  if (minor >= 0) versions.push_back("3." + std::to_string(minor));
  add_installation(s, fs::dirname(fs::dirname(resolved)), versions);
}

// The first `name` on $PATH that could run, as named there.
std::optional<std::string> on_path(const Search& s, const std::string& name) {
  for (const std::string& dir : sys::path_entries(env("PATH"))) {
    if (dir[0] != '/') continue;  // a relative entry ("", ".") is no place to look for it
    std::string python = fs::normalize(dir) + "/" + name;
    if (resolve_python(s, python)) return python;
  }
  return std::nullopt;
}

// The first python3 on $PATH: a venv, or the prefix its symlinks end in.
bool add_path_python(Search* s) {
  std::optional<std::string> python = on_path(*s, "python3");
  if (!python) return false;
  add_python(s, *python, *resolve_python(*s, *python));
  return true;
}

// Why `python` (absolute) cannot be the interpreter, or "".
std::string unusable(const Search& s, const std::string& python) {
  std::string real = fs::under(s.root, python), resolved, err;
  if (!fs::exists(real)) return "no such file";
  if (fs::is_dir(real)) return "is a directory";
  if (s.root == "/" && access(real.c_str(), X_OK) != 0) return "not executable";
  if (!fs::resolve(s.root, python, &resolved, &err)) return err;
  if (fs::basename(resolved).rfind("python", 0) != 0)
    return "not a Python interpreter (" + resolved + ")";
  return "";
}

// --python: a path, or a bare name looked up on $PATH as the shell would.
bool add_given_python(Search* s, const std::string& given, std::string* why) {
  std::string python = given;
  if (given.find('/') == std::string::npos) {
    std::optional<std::string> found = on_path(*s, given);
    if (!found) return *why = "--python " + given + ": not found on $PATH", false;
    python = *found;
  } else if (given[0] != '/') {
    char cwd[4096];
    python = (getcwd(cwd, sizeof cwd) ? std::string(cwd) : std::string("/")) + "/" + given;
  }
  python = fs::normalize(python);
  if (std::string no = unusable(*s, python); !no.empty())
    return *why = "--python " + given + ": " + no, false;
  add_python(s, python, *resolve_python(*s, python));
  return true;
}

// $VIRTUAL_ENV/bin/python3 (or python) where it exists.
std::optional<std::string> prefix_python(const std::string& root, const std::string& prefix) {
  for (const char* name : {"/bin/python3", "/bin/python"})
    if (fs::exists(fs::under(root, prefix + name))) return prefix + name;
  return std::nullopt;
}

// Whether torch/__pycache__ holds compiled bytecode: one directory listing.
bool bytecode_cached(const std::string& root, const std::string& torch_dir) {
  std::vector<std::string> names;
  std::string err;
  fs::list_dir(fs::under(root, torch_dir + "/__pycache__"), &names, &err);
  return std::any_of(names.begin(), names.end(), [](const std::string& n) {
    return n.size() > 4 && n.compare(n.size() - 4, 4, ".pyc") == 0;
  });
}

std::optional<Torch> torch_in(Search* s, const std::string& site) {
  const std::string& root = s->root;
  std::string dir = site + "/torch", err;
  TorchVersionFile file;
  std::string text = read_or_note(s, dir + "/version.py",
                                  "reinstall torch (pip install --force-reinstall torch)");
  if (text.empty() || !parse_torch_version_py(text, &file, &err)) return std::nullopt;
  Torch t;
  t.version = file.version;
  t.cuda_version = file.cuda;
  t.path = dir;
  t.bytecode_cached = bytecode_cached(root, dir);
  return t;
}

// The sites to search, in the order of SenseOptions::python.
bool find_sites(const SenseOptions& opts, Search* s, std::string* why) {
  if (!opts.python.empty()) return add_given_python(s, opts.python, why);
  if (std::string venv = env("VIRTUAL_ENV"); !venv.empty()) {
    s->python = prefix_python(s->root, fs::normalize(venv));
    add_venv(s, fs::normalize(venv));
  } else if (std::string conda = env("CONDA_PREFIX"); !conda.empty()) {
    s->python = prefix_python(s->root, fs::normalize(conda));
    add_installation(s, fs::normalize(conda), {});
  } else {
    return add_path_python(s);
  }
  return true;
}

// The interpreter's own sys.path, in its order (directories only: zip
// files and "" are not where a torch package lives). Runs `python -c` with
// this process's environment; torch is not imported.
bool ask_sys_path(const std::string& python, std::vector<std::string>* sites) {
  std::string out, err;
  if (!capture_output({python, "-c", "import sys\nfor p in sys.path: print(p)"}, {}, &out, &err)) return false;
  std::vector<std::string> found;
  for (std::size_t i = 0; i < out.size();) {
    std::size_t nl = std::min(out.find('\n', i), out.size());
    std::string p = out.substr(i, nl - i);
    i = nl + 1;
    if (!p.empty() && p[0] == '/' && fs::is_dir(p)) found.push_back(fs::normalize(p));
  }
  if (found.empty()) return false;
  *sites = std::move(found);
  return true;
}

// The first site's torch, with its libtorch_cuda and extensions if asked.
std::optional<Torch> find_torch(const SenseOptions& opts, Search* s, std::string* why) {
  std::string no;
  if (!find_sites(opts, s, &no)) {
    if (why) *why = no;
    return std::nullopt;
  }
  if (opts.ask_python && s->root == "/" && s->python) ask_sys_path(*s->python, &s->sites);
  for (const std::string& site : s->sites) {
    std::optional<Torch> torch = torch_in(s, site);
    if (!torch) continue;
    torch->python = s->python;
    if (opts.with_torch_kernels) torch->libtorch_cuda = sense_libtorch_cuda(s->root, *torch->path);
    if (opts.with_extensions)
      torch->extensions = sense_torch_extensions(s->root, site, *torch->path);
    return torch;
  }
  return std::nullopt;
}

}  // namespace

std::optional<Torch> sense_torch(const SenseOptions& opts, std::string* why,
                                 std::vector<Problem>* problems) {
  Search s{opts.root.empty() ? "/" : opts.root, {}, std::nullopt, {}};
  std::optional<Torch> torch = find_torch(opts, &s, why);
  if (problems) problems->insert(problems->end(), s.problems.begin(), s.problems.end());
  return torch;
}

}  // namespace gpuenv
