#include "sys/dynamic_library.h"

#include <dlfcn.h>

#include <cstring>

namespace gpuenv {
namespace {

std::string joined_names(const Symbol& s) {
  std::string out;
  for (const char* name : s.names) {
    if (name == nullptr) break;
    if (!out.empty()) out += " or ";
    out += name;
  }
  return out;
}

}  // namespace

DynamicLibrary::~DynamicLibrary() {
  if (handle_ != nullptr) dlclose(handle_);
}

bool DynamicLibrary::open(const std::string& name, std::string* err, bool keep_loaded) {
  if (name.empty()) {  // dlopen("") would hand back the program itself
    *err = "no library name given";
    return false;
  }
  dlerror();  // clear a stale message
  handle_ = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL | (keep_loaded ? RTLD_NODELETE : 0));
  if (handle_ != nullptr) return true;
  const char* text = dlerror();
  *err = text != nullptr ? text : name + ": cannot open shared object file";
  return false;
}

bool DynamicLibrary::resolve(std::span<const Symbol> table, std::string* missing) const {
  bool ok = true;
  for (const Symbol& s : table) {
    void* sym = nullptr;
    for (const char* name : s.names) {
      if (name == nullptr || sym != nullptr) break;
      sym = dlsym(handle_, name);
      if (sym != nullptr) *s.found = name;
    }
    std::memcpy(s.target, &sym, sizeof sym);
    if (sym == nullptr && s.required && ok) {
      *missing = joined_names(s);
      ok = false;
    }
  }
  return ok;
}

}  // namespace gpuenv
