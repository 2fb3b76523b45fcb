#include <dlfcn.h>

#include <cstdlib>
#include <mutex>
#include <vector>

#include "cublaslt.h"

namespace gpuenv_plugin {
namespace {

#define GPUENV_STR2(x) #x
#define GPUENV_STR(x) GPUENV_STR2(x)
constexpr const char* kSoname = "libcublasLt.so." GPUENV_STR(CUBLAS_VER_MAJOR);

std::vector<std::string> candidates() {
  std::vector<std::string> out;
  if (const char* v = std::getenv("GPUENV_CUBLASLT_LIBRARY"); v && *v) out.push_back(v);
  out.push_back(kSoname);
  if (const char* home = std::getenv("CUDA_HOME"); home && *home)
    out.push_back(std::string(home) + "/lib64/" + kSoname);
  out.push_back(std::string("/usr/local/cuda/lib64/") + kSoname);
  out.push_back(std::string("/usr/local/cuda/targets/x86_64-linux/lib/") + kSoname);
  out.push_back(std::string("/usr/local/cuda/targets/sbsa-linux/lib/") + kSoname);
  return out;
}

template <typename F>
bool sym(void* h, const char* name, F* fn, std::string* err) {
  *fn = reinterpret_cast<F>(dlsym(h, name));
  if (*fn) return true;
  *err = std::string("no ") + name + " in cuBLASLt";
  return false;
}

bool resolve(void* h, CublasLt* c, std::string* err) {
  return sym(h, "cublasLtCreate", &c->create, err) && sym(h, "cublasLtDestroy", &c->destroy, err) &&
         sym(h, "cublasLtGetVersion", &c->version, err) && sym(h, "cublasLtGetStatusString", &c->status_string, err) &&
         sym(h, "cublasLtMatmulDescCreate", &c->desc_create, err) &&
         sym(h, "cublasLtMatmulDescDestroy", &c->desc_destroy, err) &&
         sym(h, "cublasLtMatmulDescSetAttribute", &c->desc_set, err) &&
         sym(h, "cublasLtMatrixLayoutCreate", &c->layout_create, err) &&
         sym(h, "cublasLtMatrixLayoutDestroy", &c->layout_destroy, err) &&
         sym(h, "cublasLtMatmulPreferenceCreate", &c->pref_create, err) &&
         sym(h, "cublasLtMatmulPreferenceDestroy", &c->pref_destroy, err) &&
         sym(h, "cublasLtMatmulPreferenceSetAttribute", &c->pref_set, err) &&
         sym(h, "cublasLtMatmulAlgoGetHeuristic", &c->heuristic, err) && sym(h, "cublasLtMatmul", &c->matmul, err);
}

struct Loaded {
  CublasLt lib{};
  bool ok = false;
  std::string err;
};

void load(Loaded* l) {
  std::string reasons;
  for (const auto& path : candidates()) {
    void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!h) {
      const char* e = dlerror();
      reasons += (reasons.empty() ? "" : "; ") + std::string(e ? e : path);
      continue;
    }
    if (!resolve(h, &l->lib, &l->err)) return;  // a broken library: say so, keep it loaded
    l->lib.path = path;
    l->ok = true;
    return;
  }
  l->err = "cannot load cuBLASLt (" + reasons + "); install libcublas (CUDA 13) or set GPUENV_CUBLASLT_LIBRARY";
}

}  // namespace

const CublasLt* cublaslt(std::string* err) {
  static Loaded loaded;
  static std::once_flag once;
  std::call_once(once, load, &loaded);
  if (loaded.ok) return &loaded.lib;
  *err = loaded.err;
  return nullptr;
}

}  // namespace gpuenv_plugin
