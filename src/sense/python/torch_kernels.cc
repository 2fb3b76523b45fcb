#include "sense/python/torch_kernels.h"

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <map>
#include <set>

#include "model/hardware/kernel_target.h"
#include "sense/fatbin/fatbin_file.h"
#include "sys/fs.h"
#include "sense/host/host_parse.h"

namespace gpuenv {

namespace {

constexpr int kMaxDepth = 6;
constexpr const char* kLibtorchCuda[] = {"libtorch_cuda.so", "libtorch_cuda_cu.so",
                                         "libtorch_cuda_cpp.so"};

std::vector<std::string> sorted_targets(const std::set<std::string>& names) {
  std::vector<std::string> out(names.begin(), names.end());
  std::sort(out.begin(), out.end(), target_listed_before);
  return out;
}

// "/tmp/fake/x.so: offset 0x40: ..." -> "/x.so: offset 0x40: ...".
std::string inside_root(std::string text, const std::string& real, const std::string& path) {
  if (real == path) return text;
  if (std::size_t at = text.find(real); at != std::string::npos)
    text.replace(at, real.size(), path);
  return text;
}

// "libcudnn.so.9", "flash_attn_2_cuda.cpython-311-x86_64-linux-gnu.so".
bool is_shared_library(const std::string& name) {
  std::size_t so = name.rfind(".so");
  if (so == std::string::npos || so == 0) return false;
  bool digit_needed = false;
  for (std::size_t i = so + 3; i < name.size(); ++i) {
    if (name[i] == '.') {
      if (digit_needed) return false;
      digit_needed = true;
    } else if (name[i] >= '0' && name[i] <= '9') {
      digit_needed = false;
    } else {
      return false;
    }
  }
  return !digit_needed;
}

bool skipped_dir(const std::string& name) {
  return name == "__pycache__" ||
         (name.size() > 10 && name.compare(name.size() - 10, 10, ".dist-info") == 0);
}

// The entry's type without following a symbolic link.
unsigned char entry_type(const std::string& real, const dirent* d) {
  if (d->d_type != DT_UNKNOWN) return d->d_type;
  struct stat st;
  if (lstat(real.c_str(), &st) != 0) return DT_UNKNOWN;
  return S_ISDIR(st.st_mode) ? DT_DIR : S_ISREG(st.st_mode) ? DT_REG : DT_UNKNOWN;
}

// Appends the regular shared-library files under `dir` (seen inside root).
void walk(const std::string& root, const std::string& dir, int depth,
          std::vector<std::string>* out) {
  DIR* d = opendir(fs::under(root, dir).c_str());
  if (!d) return;
  while (const dirent* e = readdir(d)) {
    std::string name = e->d_name;
    if (name == "." || name == "..") continue;
    std::string path = fs::join(dir, name);
    unsigned char type = entry_type(fs::under(root, path), e);
    if (type == DT_DIR && depth < kMaxDepth && !skipped_dir(name))
      walk(root, path, depth + 1, out);
    else if (type == DT_REG && is_shared_library(name))
      out->push_back(path);
  }
  closedir(d);
}

// "nvidia/cu13/lib/libcublas.so.13" for SITE/nvidia/cu13/lib/libcublas.so.13,
// a path the walk found under `site`: how a wheel's RECORD names it.
std::string relative_to(const std::string& site, const std::string& path) {
  return path.substr(site.size() + (site == "/" ? 0 : 1));
}

// "nvidia" for SITE/nvidia/cu13/lib/libcublas.so.13; the module's name for
// a file at the top: "flash_attn_2_cuda" for
// SITE/flash_attn_2_cuda.cpython-311-x86_64-linux-gnu.so.
std::string package_of(const std::string& site, const std::string& path) {
  std::string rest = relative_to(site, path);
  std::size_t slash = rest.find('/');
  return slash != std::string::npos ? rest.substr(0, slash) : rest.substr(0, rest.find('.'));
}

// Which wheel installed each binary: the *.dist-info whose RECORD lists its
// path relative to `site`. Stops once every binary has one.
void add_distributions(const std::string& root, const std::string& site,
                       std::vector<CudaBinary>* bins) {
  std::map<std::string, CudaBinary*> wanted;
  for (CudaBinary& b : *bins) wanted[relative_to(site, b.path)] = &b;
  std::vector<std::string> names;
  std::string err;
  if (wanted.empty() || !fs::list_dir(fs::under(root, site), &names, &err)) return;
  std::sort(names.begin(), names.end());
  for (const std::string& dir : names) {
    std::optional<std::string> dist = dist_info_name(dir);
    std::string text;
    if (!dist || !fs::read_file(fs::under(root, fs::join(site, dir) + "/RECORD"), &text, &err))
      continue;
    for (const std::string& path : parse_record_paths(text)) {
      auto it = wanted.find(path);
      if (it == wanted.end()) continue;
      it->second->distribution = *dist;
      wanted.erase(it);
    }
    if (wanted.empty()) return;
  }
}

}  // namespace

std::vector<std::string> loadable_targets(const FatbinFile& f) {
  bool relocatable = f.relfatbin_only();
  std::set<std::string> names;
  for (const FatbinEntry& e : f.entries) {
    if (e.relocatable != relocatable) continue;
    if (e.kind == kFatbinKindCubin || e.kind == kFatbinKindPtx) names.insert(fatbin_target_name(e));
  }
  return sorted_targets(names);
}

bool read_cuda_binary(const std::string& root, const std::string& path, CudaBinary* out) {
  out->path = path;
  std::string real = fs::under(root, path), err;
  FatbinFile f;
  if (!read_fatbin_file(real, &f, &err)) {
    out->error = inside_root(err, real, path);
    return true;
  }
  out->targets = loadable_targets(f);
  return !out->targets.empty();
}

std::optional<CudaBinary> sense_libtorch_cuda(const std::string& root,
                                              const std::string& torch_dir) {
  std::string lib = torch_dir + "/lib/";
  if (fs::exists(fs::under(root, lib + kLibtorchCuda[0]))) {
    CudaBinary b;
    read_cuda_binary(root, lib + kLibtorchCuda[0], &b);
    b.package = "torch";
    return b;
  }
  std::optional<CudaBinary> merged;
  for (const char* name : {kLibtorchCuda[1], kLibtorchCuda[2]}) {
    if (!fs::exists(fs::under(root, lib + name))) continue;
    CudaBinary b;
    if (!read_cuda_binary(root, lib + name, &b)) continue;
    if (!merged) {
      merged = b;
      continue;
    }
    if (!merged->error) merged->error = b.error;
    std::set<std::string> names(merged->targets.begin(), merged->targets.end());
    names.insert(b.targets.begin(), b.targets.end());
    merged->targets = sorted_targets(names);
  }
  if (merged) merged->package = "torch";
  return merged;
}

std::vector<CudaBinary> sense_torch_extensions(const std::string& root,
                                               const std::string& site,
                                               const std::string& torch_dir) {
  std::vector<std::string> paths;
  walk(root, site, 1, &paths);
  std::sort(paths.begin(), paths.end());
  std::set<std::string> own;
  for (const char* name : kLibtorchCuda) own.insert(torch_dir + "/lib/" + name);
  std::vector<CudaBinary> out;
  for (const std::string& path : paths) {
    if (own.count(path)) continue;
    CudaBinary b;
    if (!read_cuda_binary(root, path, &b)) continue;
    b.package = package_of(site, path);
    out.push_back(std::move(b));
  }
  add_distributions(root, site, &out);
  return out;
}

}  // namespace gpuenv
